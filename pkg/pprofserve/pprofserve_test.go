package pprofserve

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
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

// TestSlowClientsCutOff: a client that trickles its headers (slowloris) is
// cut off at the header timeout instead of holding its connection.
func TestSlowClientsCutOff(t *testing.T) {
	t.Parallel()
	b := defaultBounds
	b.readHeader = 200 * time.Millisecond
	s, err := start("127.0.0.1:0", slog.New(slog.DiscardHandler), b)
	require.NoError(t, err)
	defer s.Stop()
	got := testinfra.Slowloris(t, s.Addr(), "/debug/pprof/", 5*time.Second) // under ReadTimeout: the header timeout cuts
	require.NotContains(t, got, "200 OK")
}

// TestEveryBoundIsSet: the server Start builds bounds every slow-client
// dimension.
func TestEveryBoundIsSet(t *testing.T) {
	t.Parallel()
	srv := defaultBounds.server(http.NotFoundHandler())
	for name, d := range map[string]time.Duration{"ReadHeaderTimeout": srv.ReadHeaderTimeout, "ReadTimeout": srv.ReadTimeout,
		"WriteTimeout": srv.WriteTimeout, "IdleTimeout": srv.IdleTimeout} {
		require.Positive(t, d, name)
	}
	require.Positive(t, srv.MaxHeaderBytes)
}

// TestProfileOutlastsWriteTimeout: a CPU profile longer than WriteTimeout
// still arrives whole (net/http/pprof extends its write deadline).
func TestProfileOutlastsWriteTimeout(t *testing.T) {
	t.Parallel()
	b := defaultBounds
	b.write = 200 * time.Millisecond
	s, err := start("127.0.0.1:0", slog.New(slog.DiscardHandler), b)
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
