package opsserve

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

func TestServesHealthReadinessAndMetrics(t *testing.T) {
	t.Parallel()
	var redisDown error
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "braid_test_total", Help: "t"}))
	s, err := Start(Config{Addr: "127.0.0.1:0", Service: "worker", Metrics: reg, Ready: map[string]Check{
		"redis": func(context.Context) error { return redisDown },
		"bus":   func(context.Context) error { return nil },
	}}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer s.Stop()
	get := func(path string) (int, string) {
		res, err := http.Get("http://" + s.Addr() + path)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	code, body := get("/healthz")
	require.Equal(t, 200, code)
	require.Contains(t, body, `"service":"worker"`)
	require.Contains(t, body, `"version":"dev`)
	code, body = get("/readyz")
	require.Equal(t, 200, code, body)
	require.NoError(t, Probe(context.Background(), s.Addr(), "/readyz"))
	require.Zero(t, RunHealthcheck(s.Addr(), io.Discard))

	redisDown = errors.New("dial tcp: connection refused")
	code, body = get("/readyz")
	require.Equal(t, 503, code)
	require.Contains(t, body, `"redis":"dial tcp: connection refused"`)
	require.Contains(t, body, `"bus":"ok"`)
	require.ErrorContains(t, Probe(context.Background(), s.Addr(), "/readyz"), "503")
	var out strings.Builder
	require.Equal(t, 1, RunHealthcheck(s.Addr(), &out))
	require.Contains(t, out.String(), "not ready")

	code, body = get("/metrics")
	require.Equal(t, 200, code)
	require.Contains(t, body, "braid_test_total")
}

func TestOffWithoutAnAddress(t *testing.T) {
	t.Parallel()
	s, err := Start(Config{}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.Nil(t, s)
	s.Stop()
	require.Empty(t, s.Addr())
	require.Error(t, Probe(context.Background(), "", "/readyz"))
}

func TestProbeUsesLoopbackForWildcards(t *testing.T) {
	t.Parallel()
	s, err := Start(Config{Addr: "127.0.0.1:0", Service: "x"}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer s.Stop()
	port := s.Addr()[strings.LastIndex(s.Addr(), ":"):]
	for _, a := range []string{port, "0.0.0.0" + port} {
		require.NoError(t, Probe(context.Background(), a, "/healthz"), a)
	}
	require.Error(t, Probe(context.Background(), "nonsense", "/healthz"))
}

// TestSlowClientsCutOff: a client that trickles its headers (slowloris) is
// cut off at the header timeout instead of holding its connection.
func TestSlowClientsCutOff(t *testing.T) {
	t.Parallel()
	b := DefaultBounds
	b.ReadHeader = 200 * time.Millisecond
	s, err := Listen("x ops", "127.0.0.1:0", Handler(Config{Service: "x"}), b, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer s.Stop()
	got := testinfra.Slowloris(t, s.Addr(), "/healthz", 5*time.Second) // under ReadTimeout: the header timeout cuts
	require.NotContains(t, got, "200 OK")
}

// TestEveryBoundIsSet: the server Start builds bounds every slow-client
// dimension (a zero would mean none).
func TestEveryBoundIsSet(t *testing.T) {
	t.Parallel()
	srv := DefaultBounds.server(http.NotFoundHandler())
	for name, d := range map[string]time.Duration{"ReadHeaderTimeout": srv.ReadHeaderTimeout, "ReadTimeout": srv.ReadTimeout,
		"WriteTimeout": srv.WriteTimeout, "IdleTimeout": srv.IdleTimeout} {
		require.Positive(t, d, name)
	}
	require.Greater(t, srv.WriteTimeout, CheckTimeout, "a readiness check has time to answer")
	require.Positive(t, srv.MaxHeaderBytes)
}
