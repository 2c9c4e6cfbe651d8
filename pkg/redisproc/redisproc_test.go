package redisproc_test

import (
	"context"
	"fmt"
	"net"
	"os"
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

// TestPassword: a server started with a password refuses clients without
// it, answers with it, and the password is not on its command line.
func TestPassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr, pw := freeAddr(t), "pw-0123456789abcdef"
	s, err := redisproc.Start(ctx, redisproc.Options{Addr: addr, Dir: t.TempDir(), Password: pw})
	require.NoError(t, err)
	defer func() { _ = s.Stop(ctx) }()
	require.ErrorContains(t, redisproc.Ping(addr), "NOAUTH")
	require.ErrorContains(t, redisproc.PingAuth(addr, "wrong"), "AUTH answered")
	require.NoError(t, redisproc.PingAuth(addr, pw))
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.PID()))
	require.NoError(t, err)
	require.NotContains(t, string(cmdline), pw, "the password is in the process list")
}
