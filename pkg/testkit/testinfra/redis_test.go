package testinfra

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/devinfra/redisproc"
	"github.com/stretchr/testify/require"
)

// aofContains reports whether any append-only file under dir holds needle.
func aofContains(t *testing.T, dir string, needle []byte) bool {
	files, err := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.aof"))
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if bytes.Contains(b, needle) {
			return true
		}
	}
	return false
}

// TestRedisKillRestartKeepsAOFData writes a key, waits until redis has
// written it to its append-only file, SIGKILLs the server and restarts it on
// the same port: the key is back, replayed from the AOF. The wait is on the
// file itself, so the test does not depend on appendfsync timing, and it
// fails if Restart used another directory or AOF were off.
func TestRedisKillRestartKeepsAOFData(t *testing.T) {
	t.Parallel()
	r := StartRedis(t)
	c := r.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	key := UniqueName(t, "k")
	require.NoError(t, c.Set(ctx, key, "durable", 0).Err())
	require.Eventually(t, func() bool { return aofContains(t, r.Dir, []byte(key)) },
		5*time.Second, 20*time.Millisecond, "key never reached the AOF")

	addr := r.Addr
	r.Kill()
	require.Error(t, redisproc.Ping(r.Addr), "server still answers after Kill")

	r.Restart(t)
	require.Equal(t, addr, r.Addr)
	got, err := c.Get(ctx, key).Result()
	require.NoError(t, err)
	require.Equal(t, "durable", got)
}

// TestRedisURLAndRestartWhileRunning checks the URL form and that Restart of
// a running server stops it first and keeps data written before.
func TestRedisURLAndRestartWhileRunning(t *testing.T) {
	t.Parallel()
	r := StartRedis(t)
	require.Equal(t, "redis://"+r.Addr+"/0", r.URL)
	c := r.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	r.Restart(t) // graceful: SIGTERM flushes the AOF
	got, err := c.Get(ctx, "k").Result()
	require.NoError(t, err)
	require.Equal(t, "v", got)
}
