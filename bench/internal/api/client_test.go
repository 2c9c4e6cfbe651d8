package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// decodeClock is an answer that notes when its decoding began.
type decodeClock struct{ began time.Time }

func (d *decodeClock) UnmarshalJSON([]byte) error {
	d.began = time.Now()
	return nil
}

// TestReceivedBeforeDecoding: the time an answer was held is taken when
// its last byte was read, before it is decoded, and the decode is
// reported apart — the bench's client walls do not carry its own JSON
// decoding.
func TestReceivedBeforeDecoding(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "k", r.Header.Get("X-API-Key"))
		_, _ = w.Write([]byte(`{"id":"r1","status":"succeeded"}`))
	}))
	defer srv.Close()
	c := New(srv.URL, "k", 1)

	var d decodeClock
	got, err := c.do(context.Background(), http.MethodGet, "/runs/r1", nil, http.StatusOK, &d)
	require.NoError(t, err)
	require.False(t, d.began.IsZero(), "the answer was decoded")
	require.False(t, got.At.After(d.began), "held before its decoding began")
	require.GreaterOrEqual(t, got.Decode, d.began.Sub(got.At), "the decode is counted from the answer's last byte")
	require.Positive(t, got.Decode)

	r, got, err := c.RunAndWait(context.Background(), "w", time.Second)
	require.NoError(t, err)
	require.Equal(t, "succeeded", r.Status)
	require.False(t, got.At.IsZero(), "RunAndWait says when it held the ended run")
}
