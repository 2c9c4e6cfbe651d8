package pprofserve

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStartOffWhenEmpty(t *testing.T) {
	t.Parallel()
	s, err := Start("", slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.Nil(t, s)
	s.Stop() // safe on nil
}

func TestServesProfiles(t *testing.T) {
	t.Parallel()
	s, err := Start("127.0.0.1:0", slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer s.Stop()
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get("http://" + s.Addr() + "/debug/pprof/goroutine?debug=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "goroutine profile:"), "got %.80q", b)
	s.Stop()
	s.Stop() // twice is safe
	_, err = hc.Get("http://" + s.Addr() + "/debug/pprof/")
	require.Error(t, err, "server still answering after Stop")
}

func TestBadAddrFails(t *testing.T) {
	t.Parallel()
	_, err := Start("127.0.0.1:notaport", slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "pprof listen addr=127.0.0.1:notaport")
}
