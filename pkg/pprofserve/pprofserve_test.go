package pprofserve

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/opsserve"
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

// TestProfileOutlastsWriteTimeout: a CPU profile longer than WriteTimeout
// still arrives whole (net/http/pprof extends its write deadline).
func TestProfileOutlastsWriteTimeout(t *testing.T) {
	t.Parallel()
	b := opsserve.DefaultBounds
	b.Write = 200 * time.Millisecond
	s, err := opsserve.Listen("pprof", "127.0.0.1:0", Handler(), b, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer s.Stop()
	hc := &http.Client{Timeout: 30 * time.Second}
	resp, err := hc.Get("http://" + s.Addr() + "/debug/pprof/profile?seconds=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.NotEmpty(t, body)
}
