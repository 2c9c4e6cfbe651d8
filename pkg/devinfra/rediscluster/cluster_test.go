package rediscluster

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestStartShapes forms clusters of other shapes than the test helpers'
// 3+3 (testinfra's TestRedisClusterFailover covers that one, a password
// and failover): every slot served through a cluster client, each master
// with its replicas, and Stop twice.
func TestStartShapes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server not found: run `make deps` (apt-get install redis-server)")
	}
	for _, tt := range []struct {
		name              string
		masters, replicas int
	}{
		{"three masters, no replica", 3, 0},
		{"two masters, two replicas each", 2, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := Start(ctx, Config{Dir: t.TempDir(), Masters: tt.masters, ReplicasPerMaster: tt.replicas})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Stop() })
			require.Len(t, c.Addrs, tt.masters*(1+tt.replicas))
			require.Len(t, c.PIDs(), len(c.Addrs))
			require.Equal(t, "redis-cluster://"+strings.Join(c.Addrs, ","), c.URL)
			requireShape(t, ctx, c, tt.masters, tt.replicas)
			require.NoError(t, c.Stop())
			require.NoError(t, c.Stop(), "Stop twice")
			require.Empty(t, c.PIDs())
		})
	}
}

// requireShape writes through a cluster client to every master and
// checks each master's replica count.
func requireShape(t *testing.T, ctx context.Context, c *Cluster, masters, replicas int) {
	t.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs, ContextTimeoutEnabled: true})
	defer cc.Close()
	for i := range masters {
		key, err := keyInSlots("shape:", []slots{slotRange(i, masters)})
		require.NoError(t, err)
		require.NoError(t, cc.Set(ctx, key, "v", 0).Err())
	}
	// ForEachMaster calls back concurrently: gather, then check here.
	var mu sync.Mutex
	type master struct {
		keys     int64
		replicas string
	}
	seen := map[string]master{}
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		keys, err := m.DBSize(ctx).Result()
		if err != nil {
			return err
		}
		info, err := m.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		seen[m.Options().Addr] = master{keys: keys, replicas: infoField(info, "connected_slaves")}
		return nil
	})
	require.NoError(t, err)
	require.Len(t, seen, masters)
	for addr, m := range seen {
		require.EqualValues(t, 1, m.keys, "master %s", addr)
		require.Equal(t, strconv.Itoa(replicas), m.replicas, "master %s", addr)
	}
}

func TestConfigIsValidated(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"no dir", Config{}, "Dir is required"},
		{"negative masters", Config{Dir: "d", Masters: -1}, "masters"},
		{"too many masters", Config{Dir: "d", Masters: statestore.SlotCount + 1}, "masters"},
		{"negative replicas", Config{Dir: "d", ReplicasPerMaster: -1}, "replicas per master"},
		{"negative timeout", Config{Dir: "d", NodeTimeout: -time.Second}, "negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Start(context.Background(), tt.cfg)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}
