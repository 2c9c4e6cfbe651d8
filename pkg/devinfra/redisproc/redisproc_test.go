package redisproc_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/braidhq/braid/pkg/devinfra/redisproc"
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

	s, addr := startOnFreePort(t, redisproc.Options{Dir: t.TempDir()})
	require.NoError(t, redisproc.Ping(addr))
	require.NoError(t, s.Stop(ctx))
	<-s.Done()
	require.Error(t, redisproc.Ping(addr))
	require.NoError(t, s.Stop(ctx), "stopping an exited server is a no-op")
}

// startOnFreePort starts a server with o on a free loopback port and
// returns it and its address. A port found free can be taken (by another
// test process's listener or outgoing connection) before redis-server binds
// it: that start is tried again on another port, three times at most.
func startOnFreePort(t *testing.T, o redisproc.Options) (*redisproc.Server, string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		o.Addr = l.Addr().String()
		require.NoError(t, l.Close())
		s, err := redisproc.Start(context.Background(), o)
		if err == nil {
			return s, o.Addr
		}
		if attempt == 3 || !strings.Contains(err.Error(), "Address already in use") {
			require.NoError(t, err)
		}
		t.Logf("start attempt %d: %v", attempt, err)
	}
}

// TestPassword: a server started with a password refuses clients without
// it, answers with it, and the password is not on its command line.
func TestPassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pw, dir := `pw 0123 "quoted" \ end`, t.TempDir()
	s, addr := startOnFreePort(t, redisproc.Options{Dir: dir, Password: pw})
	defer func() { _ = s.Stop(ctx) }()
	require.ErrorContains(t, redisproc.Ping(addr), "NOAUTH")
	require.ErrorContains(t, redisproc.PingAuth(addr, "wrong"), "AUTH answered")
	require.NoError(t, redisproc.PingAuth(addr, pw))
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.PID()))
	require.NoError(t, err)
	require.Contains(t, string(cmdline), "redis.conf", "argv is as given (no rewritten process title)")
	require.NotContains(t, string(cmdline), "0123", "the password is in the process list")
	st, err := os.Stat(filepath.Join(dir, "redis.conf"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}
