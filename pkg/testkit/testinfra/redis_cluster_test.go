package testinfra

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// clusterKeys is how many keys TestRedisClusterFailover writes: enough
// that every third of the slots holds some.
const clusterKeys = 300

// TestRedisClusterFailover starts a cluster with a password, checks Slot
// against the cluster's own CLUSTER KEYSLOT, writes keys over every master
// through the cluster client, has the replicas acknowledge them, kills the
// master of the first third of the slots and reads every key back from the
// promoted replica; then restarts the killed node, which rejoins as a
// replica, and reads them again.
func TestRedisClusterFailover(t *testing.T) {
	t.Parallel()
	const password = "pw 0123 cluster"
	began := time.Now()
	c := StartRedisClusterWith(t, RedisClusterConfig{Password: password})
	t.Logf("cluster of %d nodes up in %s", len(c.Addrs), time.Since(began).Round(time.Millisecond))
	require.Len(t, c.Addrs, clusterNodes)
	require.Equal(t, "redis-cluster://:pw%200123%20cluster@"+strings.Join(c.Addrs, ","), c.URL)
	requireNoPasswordInArgv(t, c, password)
	cc := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("SlotIsClusterKeyslot", func(t *testing.T) {
		for _, key := range slotFixtures {
			want, err := cc.ClusterKeySlot(ctx, key.key).Result()
			require.NoError(t, err)
			require.EqualValues(t, want, Slot(key.key), "key %q", key.key)
		}
	})

	keys := writeAcrossMasters(t, ctx, c, cc)
	c.SyncReplicas(t)
	began = time.Now()
	killed := c.KillMaster(t, 0)
	t.Logf("master %s failed over in %s", killed, time.Since(began).Round(time.Millisecond))
	require.Equal(t, c.Addrs[0], killed, "the first third of the slots starts on the first node")
	requireKeys(t, ctx, cc, keys)
	require.NoError(t, cc.Set(ctx, keys[0], "after failover", 0).Err(), "the promoted replica takes writes")

	began = time.Now()
	c.Restart(t, killed)
	t.Logf("node %s rejoined in %s", killed, time.Since(began).Round(time.Millisecond))
	role, err := nodeClient(t, c, killed).Do(ctx, "role").Slice()
	require.NoError(t, err)
	require.Equal(t, "slave", role[0], "the killed master comes back as a replica")
	require.Equal(t, "after failover", cc.Get(ctx, keys[0]).Val())
	requireKeys(t, ctx, cc, keys[1:])
}

// writeAcrossMasters sets clusterKeys keys (value = key) through cc and
// checks they landed on every master.
func writeAcrossMasters(t *testing.T, ctx context.Context, c *RedisCluster, cc *redis.ClusterClient) []string {
	t.Helper()
	keys := make([]string, clusterKeys)
	ranges := map[int]bool{}
	for i := range keys {
		keys[i] = UniqueName(t, "k")
		require.NoError(t, cc.Set(ctx, keys[i], keys[i], 0).Err())
		ranges[Slot(keys[i])*clusterMasters/SlotCount] = true
	}
	require.Len(t, ranges, clusterMasters, "the keys miss a master")
	for _, addr := range c.Addrs[:clusterMasters] {
		n, err := nodeClient(t, c, addr).DBSize(ctx).Result()
		require.NoError(t, err)
		require.Positive(t, n, "master %s holds no key", addr)
	}
	return keys
}

// requireKeys reads every key through cc and expects its own name.
func requireKeys(t *testing.T, ctx context.Context, cc *redis.ClusterClient, keys []string) {
	t.Helper()
	for _, k := range keys {
		got, err := cc.Get(ctx, k).Result()
		require.NoError(t, err, "key %s", k)
		require.Equal(t, k, got)
	}
}

// requireNoPasswordInArgv checks no node has the password on its command line.
func requireNoPasswordInArgv(t *testing.T, c *RedisCluster, password string) {
	t.Helper()
	pids := c.c.PIDs()
	require.Len(t, pids, clusterNodes)
	for _, pid := range pids {
		argv, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if os.IsNotExist(err) {
			return // no /proc on this system
		}
		require.NoError(t, err)
		require.Contains(t, string(argv), "--cluster-enabled")
		require.NotContains(t, string(argv), password)
	}
}

// nodeClient is a client of the one node at addr (no redirects), closed on
// t.Cleanup.
func nodeClient(t *testing.T, c *RedisCluster, addr string) *redis.Client {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Addr: addr, Password: c.password, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}
