package testinfra

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// CountTrips adds a hook to rdb that counts its Redis round trips (each
// command sent alone and each pipeline once), leaving out those that set up
// a new pooled connection (HELLO, CLIENT SETINFO), and returns the count.
func CountTrips(rdb redis.UniversalClient) *atomic.Int64 {
	n := &atomic.Int64{}
	rdb.AddHook(tripCounter{n})
	return n
}

type tripCounter struct{ n *atomic.Int64 }

func (c tripCounter) count(first redis.Cmder) {
	if name := first.Name(); name != "hello" && name != "client" {
		c.n.Add(1)
	}
}

func (c tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.count(cmd); return next(ctx, cmd) }
}
func (c tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.count(cmds[0]); return next(ctx, cmds) }
}
