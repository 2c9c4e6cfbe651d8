package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testinfra"
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
