package testinfra

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/devinfra/rediscluster"
	"github.com/redis/go-redis/v9"
)

// Shape and bounds of the clusters StartRedisCluster builds.
const (
	clusterMasters = 3 // each serves a contiguous third of the slots
	clusterNodes   = 2 * clusterMasters
	// ClusterNodeTimeout is the cluster-node-timeout of every node: a
	// master unreachable this long is failed over. Small, so a test's
	// failover takes seconds (node timeout + election), not the default 15 s.
	ClusterNodeTimeout  = rediscluster.DefaultNodeTimeout
	clusterReadyTimeout = 30 * time.Second // start-up, until every slot is served and replicated
)

// ClusterURLScheme is the scheme of RedisCluster.URL, the form
// statestore.NewClient reads as a Redis Cluster.
const ClusterURLScheme = rediscluster.URLScheme

// RedisCluster is a Redis Cluster of real redis-server processes started
// by StartRedisCluster: three masters, each serving a contiguous third of
// the 16384 slots, and one replica of each (pkg/devinfra/rediscluster
// forms it). Addrs and URL stay the same across KillMaster and Restart;
// which node is a master changes.
type RedisCluster struct {
	// Addrs are every node's host:port, the three first masters first (in
	// slot order), then their replicas in the same order. Any one is a seed.
	Addrs []string
	// URL is redis-cluster://[:password@]host:port,host:port,... listing
	// every node, for statestore.NewClient and configs.
	URL string

	password string
	c        *rediscluster.Cluster
}

// RedisClusterConfig changes how StartRedisClusterWith builds a cluster;
// the zero value builds what StartRedisCluster builds.
type RedisClusterConfig struct {
	// Password, when set, is required of every client (requirepass), and
	// replicas sync with it (masterauth). It goes into each node's
	// redis.conf, not on the command line.
	Password string
}

// StartRedisCluster starts a 3-master, 3-replica Redis Cluster on free
// loopback ports (each node with AOF in its own t.TempDir), without a
// password, as StartRedis runs its server. See StartRedisClusterWith.
func StartRedisCluster(t testing.TB) *RedisCluster {
	t.Helper()
	return StartRedisClusterWith(t, RedisClusterConfig{})
}

// StartRedisClusterWith starts six redis-server processes in cluster mode
// with rediscluster.Start (cluster-node-timeout ClusterNodeTimeout, an
// explicit cluster bus port, AOF, cluster-config-file in each node's
// directory, ports from FreePort, each node killed if the test process
// dies) and waits, at most 30 s, until every node says cluster_state:ok
// with every slot served and every replica is in sync with its master.
// Every node is stopped by PID on t.Cleanup.
func StartRedisClusterWith(t testing.TB, cfg RedisClusterConfig) *RedisCluster {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal(redisMissing)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadyTimeout)
	defer cancel()
	c, err := rediscluster.Start(ctx, rediscluster.Config{
		Dir: filepath.Join(t.TempDir(), "cluster"), Password: cfg.Password,
		Masters: clusterMasters, ReplicasPerMaster: clusterNodes/clusterMasters - 1,
		NodeTimeout: ClusterNodeTimeout, ReadyTimeout: clusterReadyTimeout,
		FreePort: freePort, SysProcAttr: redisAttrs(),
	})
	if err != nil {
		t.Fatalf("start redis cluster: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return &RedisCluster{Addrs: c.Addrs, URL: c.URL, password: cfg.Password, c: c}
}

// ClientStateReload is how often Client's clients reload the slot map.
// go-redis (9.23) reloads it on a MOVED, ASK or READONLY answer and every
// ClusterStateReloadInterval, 60 s by default, but not when a master stops
// answering: with the default a client sent a dead master's slots to the
// dead node for 58 s after the failover had finished (measured).
const ClientStateReload = time.Second

// Client returns a go-redis cluster client seeded with every node, with
// ContextTimeoutEnabled, so context deadlines bound every command, and
// ClientStateReload, so it follows a failover within about a second. It
// follows MOVED redirects. It is closed on t.Cleanup.
func (c *RedisCluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs, Password: c.password,
		ContextTimeoutEnabled: true, ClusterStateReloadInterval: ClientStateReload})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// KillMaster SIGKILLs the node that now serves the i-th third of the slots
// (i in 0..2; after a failover that is the promoted replica), then waits,
// at most 15 s, until every surviving node says cluster_state:ok and names
// a live node (the killed one's replica) as that third's master. It
// returns the killed node's address, for Restart. That third needs a live
// replica (after a KillMaster, Restart the killed node before killing the
// same third again). Writes the replica had not received are lost, as in
// any failover: acknowledge them with SyncReplicas first.
func (c *RedisCluster) KillMaster(t testing.TB, i int) (killedAddr string) {
	t.Helper()
	addr, err := c.c.KillMaster(context.Background(), i)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// Restart starts the killed node at addr again on its port and directory
// (its AOF and nodes.conf), and waits, at most 15 s, until it rejoined as
// a replica in sync with its master and every node says cluster_state:ok.
func (c *RedisCluster) Restart(t testing.TB, addr string) {
	t.Helper()
	if err := c.c.Restart(context.Background(), addr); err != nil {
		t.Fatal(err)
	}
}

// SyncReplicas waits until every live master's replica holds every write
// the master acknowledged so far: on each master, one write to a key of
// its own slots followed by WAIT 1 on the same connection (the replication
// stream is ordered, so the earlier writes of every client arrived too).
// Writes synced this way survive KillMaster.
func (c *RedisCluster) SyncReplicas(t testing.TB) {
	t.Helper()
	if err := c.c.SyncReplicas(context.Background()); err != nil {
		t.Fatal(err)
	}
}
