package workload

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// quietWait bounds how long a workload waits for the bench's Redis to end
// a background save or AOF rewrite a previous workload started.
const quietWait = 60 * time.Second

// waitQuiet returns once no server of the bench's Redis is saving in the
// background (an AOF rewrite or an RDB snapshot, each a forked child using
// a core for a second or more), or after quietWait, and says how long it
// waited. Every workload starts after it: a big workload's writes set off
// an AOF rewrite that would otherwise run through the next workload — a
// `braid dev` one included, whose stack shares only the machine.
func waitQuiet(ctx context.Context, rdb redis.UniversalClient) (time.Duration, error) {
	start := time.Now()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		busy, err := savingServers(ctx, rdb)
		if err != nil {
			return time.Since(start), err
		}
		if busy == 0 {
			return time.Since(start), nil
		}
		if time.Since(start) > quietWait {
			return time.Since(start), fmt.Errorf("%d redis server(s) still saving after %s", busy, quietWait)
		}
		select {
		case <-ctx.Done():
			return time.Since(start), ctx.Err()
		case <-tick.C:
		}
	}
}

// savingServers counts the servers with a background save in progress.
func savingServers(ctx context.Context, rdb redis.UniversalClient) (int, error) {
	var n atomic.Int32
	err := forEachServer(ctx, rdb, func(ctx context.Context, node *redis.Client) error {
		info, err := node.Info(ctx, "persistence").Result()
		if err != nil {
			return err
		}
		busy, err := saving(info)
		if busy {
			n.Add(1)
		}
		return err
	})
	return int(n.Load()), err
}

// saving reports whether an INFO persistence answer shows a background
// save or AOF rewrite in progress (or one scheduled to start).
func saving(info string) (bool, error) {
	v, err := infoInts(info, "rdb_bgsave_in_progress", "aof_rewrite_in_progress", "aof_rewrite_scheduled")
	if err != nil {
		return false, err
	}
	return v[0]+v[1]+v[2] > 0, nil
}
