package workload

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// scanCount is the COUNT hint of each SCAN step; scanSteps bounds the steps.
const (
	scanCount = 1000
	scanSteps = 1_000_000
)

// runBytesPerNode returns the Redis memory of one finished run's keys
// (MEMORY USAGE ... SAMPLES 0, exact), outputs hash excluded, divided by
// nodes. It SCANs every master (on a cluster the run's keys share its
// hash tag, so one master holds them all) and only reads.
func (s *session) runBytesPerNode(ctx context.Context, run string, nodes int) (float64, error) {
	var total atomic.Int64
	err := forEachMaster(ctx, s.env.Redis, func(ctx context.Context, node *redis.Client) error {
		n, err := s.runBytesOn(ctx, node, run)
		total.Add(n)
		return err
	})
	if err != nil {
		return 0, err
	}
	return float64(total.Load()) / float64(nodes), nil
}

// runBytesOn sums MEMORY USAGE of run's keys on one node, outputs excluded.
func (s *session) runBytesOn(ctx context.Context, node *redis.Client, run string) (int64, error) {
	var total int64
	var cursor uint64
	for range scanSteps {
		keys, next, err := node.Scan(ctx, cursor, s.keys.RunPattern(run), scanCount).Result()
		if err != nil {
			return 0, fmt.Errorf("scan keys of run %s on %s: %w", run, node.Options().Addr, err)
		}
		for _, k := range keys {
			if k == s.keys.Outputs(run) {
				continue
			}
			n, err := node.MemoryUsage(ctx, k, 0).Result()
			if err != nil && err != redis.Nil {
				return 0, fmt.Errorf("memory usage %s: %w", k, err)
			}
			total += n
		}
		if cursor = next; cursor == 0 {
			return total, nil
		}
	}
	return 0, fmt.Errorf("scan keys of run %s on %s: more than %d steps", run, node.Options().Addr, scanSteps)
}
