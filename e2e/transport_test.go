package e2e

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestStackOnLeastPrivilegeRedisUser runs the services as a Redis ACL user
// that may touch only Braid's keys and no @dangerous command (CONFIG, KEYS,
// FLUSHALL, DEBUG, ...), with the default user disabled: the seed
// workflows succeed, a client without credentials is refused, and no
// process logs the password, which travels only inside BRAID_REDIS_URL.
func TestStackOnLeastPrivilegeRedisUser(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	r := testinfra.StartRedis(t)
	pw := "pw-" + randomHex(t, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin := r.Client(t)
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "braid", "on", ">"+pw, "~braid:*", "&*", "+@all", "-@dangerous").Err())
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "default", "off").Err())
	require.NoError(t, admin.Close())

	anon := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer anon.Close()
	require.ErrorContains(t, anon.Ping(ctx).Err(), "NOAUTH", "the default user still works")

	u := url.URL{Scheme: "redis", User: url.UserPassword("braid", pw), Host: r.Addr, Path: "/0"}
	s, stop := StartStack(t, stackOpts{workers: 1, kafka: k.Addr, redisURL: u.String()})
	defer stop()
	s.dumpOnFailure(t)
	c := s.client(t)
	for _, file := range []string{"seed-000-example-workflow.json", "seed-004-fan-out-fan-in.json"} {
		name, _ := c.register(readExample(t, file))
		run := c.waitDone(c.start(name, `{}`), runTimeout)
		require.Equal(t, "succeeded", run.Status, "%s: %s", file, run.Error)
	}
	for _, p := range s.procs {
		require.False(t, strings.Contains(p.log(), pw), "%s logged the Redis password", p.name)
	}
}

// TestDevRedisRequiresItsPassword: braid dev's redis-server requires the
// password braid dev generated into its data dir (the same after a
// restart), the password is not on any process's command line, and the
// services still work with it.
func TestDevRedisRequiresItsPassword(t *testing.T) {
	t.Parallel()
	dir, dataDir, addrs := t.TempDir(), filepath.Join(t.TempDir(), ".braid"), freeDevAddrs(t)
	d := startDev(t, dir, dataDir, addrs)
	b, err := os.ReadFile(filepath.Join(dataDir, "redis-password"))
	require.NoError(t, err)
	pw := strings.TrimSpace(string(b))
	require.Len(t, pw, 48)
	st, err := os.Stat(filepath.Join(dataDir, "redis-password"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	anon := redis.NewClient(&redis.Options{Addr: addrs.redis})
	defer anon.Close()
	require.ErrorContains(t, anon.Ping(ctx).Err(), "NOAUTH")
	authed := redis.NewClient(&redis.Options{Addr: addrs.redis, Password: pw})
	defer authed.Close()
	require.NoError(t, authed.Ping(ctx).Err())

	requireNotInAnyCmdline(t, pw)
	requireAbsent(t, d.log(), pw, "braid dev printed its Redis password")

	c := &apiClient{t: t, base: d.stack.URL, key: d.stack.Key, hc: &http.Client{Timeout: httpTimeout}}
	name, _ := c.register(readExample(t, "seed-000-example-workflow.json"))
	require.Equal(t, "succeeded", c.waitDone(c.start(name, `{}`), runTimeout).Status)
}

// requireNotInAnyCmdline fails when s is on the command line of any
// process of this machine (/proc/*/cmdline).
func requireNotInAnyCmdline(t *testing.T, s string) {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	seen := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone meanwhile
		}
		seen++
		require.NotContains(t, string(b), s, "pid %s has the secret on its command line", e.Name())
	}
	require.Greater(t, seen, 3, "read too few command lines to mean anything")
}
