package workload

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// forEachMaster calls fn with a client of every master: the server of a
// single-node client, or each master of a cluster client (go-redis calls
// those concurrently, so fn must be safe for concurrent use). A command
// that reads one node's keyspace or statistics — SCAN, INFO — sees only
// that node, so on a cluster it must be sent to every master.
func forEachMaster(ctx context.Context, rdb redis.UniversalClient, fn func(ctx context.Context, node *redis.Client) error) error {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, fn)
	case *redis.Client:
		return fn(ctx, c)
	}
	return fmt.Errorf("redis client %T: neither a single-node nor a cluster client", rdb)
}

// forEachServer is forEachMaster over every server: a cluster's replicas
// too (they keep an AOF of their own).
func forEachServer(ctx context.Context, rdb redis.UniversalClient, fn func(ctx context.Context, node *redis.Client) error) error {
	if c, ok := rdb.(*redis.ClusterClient); ok {
		return c.ForEachShard(ctx, fn)
	}
	return forEachMaster(ctx, rdb, fn)
}
