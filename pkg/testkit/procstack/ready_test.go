package procstack

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReady(t *testing.T) {
	t.Parallel()
	var readyz atomic.Int32
	readyz.Store(http.StatusServiceUnavailable)
	var workers atomic.Value
	workers.Store(`{"items":[{"id":"w-1"}]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-API-Key") != "k" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/readyz":
			w.WriteHeader(int(readyz.Load()))
		case "/workers":
			_, _ = w.Write([]byte(workers.Load().(string)))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	hc := srv.Client()
	ready := func(key string) error { return Ready(t.Context(), hc, srv.URL, key, []string{"w-1", "w-2"}) }

	require.ErrorContains(t, ready("k"), "/readyz answered 503")
	readyz.Store(http.StatusOK)
	require.ErrorContains(t, ready("k"), "worker w-2 not listed")
	require.ErrorContains(t, ready("bad"), "answered 401")
	workers.Store(`{"items":[{"id":"w-2"},{"id":"w-1"},{"id":"other"}]}`)
	require.NoError(t, ready("k"))
	workers.Store(`not json`)
	require.ErrorContains(t, ready("k"), "decode answer")
	require.ErrorContains(t, Ready(t.Context(), hc, "http://127.0.0.1:1", "k", nil), "GET http://127.0.0.1:1/readyz")
}
