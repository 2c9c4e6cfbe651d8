package orchsvc

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/stretchr/testify/require"
)

func TestOpsServeMetricsAndHealth(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	s := &Service{log: slog.New(slog.DiscardHandler), rdb: testinfra.StartRedis(t).Client(t)}
	s.StaleWrites.Add(3)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := s.serveOps(ctx, addr)
	require.NoError(t, err)
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(b), "braid_orchestrator_stale_writes_total 3")
	_, err = s.serveOps(ctx, addr)
	require.Error(t, err, "a taken address is an error")
	for _, path := range []string{"/healthz", "/readyz"} {
		res, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, path)
	}
	cancel() // stopping: not ready
	res, err := http.Get("http://" + addr + "/readyz")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	srv.Stop() // gone once Stop returns
	_, err = http.Get("http://" + addr + "/readyz")
	require.Error(t, err)
}
