package redisproc_test

import (
	"context"
	"net"
	"os/exec"
	"testing"

	"github.com/braidhq/braid/pkg/redisproc"
	"github.com/stretchr/testify/require"
)

func TestStartStopAndErrors(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server not found: run `make deps`")
	}
	ctx := context.Background()
	_, err := redisproc.Start(ctx, redisproc.Options{Addr: "no-port", Dir: t.TempDir()})
	require.ErrorContains(t, err, `address "no-port"`)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, err = redisproc.Start(ctx, redisproc.Options{Addr: l.Addr().String(), Dir: t.TempDir()})
	require.ErrorContains(t, err, "exited before answering PING", "a taken port is reported, with the output")

	addr := freeAddr(t)
	s, err := redisproc.Start(ctx, redisproc.Options{Addr: addr, Dir: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, redisproc.Ping(addr))
	require.NoError(t, s.Stop(ctx))
	<-s.Done()
	require.Error(t, redisproc.Ping(addr))
	require.NoError(t, s.Stop(ctx), "stopping an exited server is a no-op")
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}
