package workload

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// scanCount is the COUNT hint of each SCAN step; scanSteps bounds the steps.
const (
	scanCount = 1000
	scanSteps = 1_000_000
)

// runBytesPerNode returns the Redis memory of one finished run's keys
// (MEMORY USAGE ... SAMPLES 0, exact), outputs hash excluded, divided by
// nodes. It only reads Redis.
func (s *session) runBytesPerNode(ctx context.Context, run string, nodes int) (float64, error) {
	rdb := s.env.Redis
	var total int64
	var cursor uint64
	for range scanSteps {
		keys, next, err := rdb.Scan(ctx, cursor, s.keys.RunPattern(run), scanCount).Result()
		if err != nil {
			return 0, fmt.Errorf("scan keys of run %s: %w", run, err)
		}
		for _, k := range keys {
			if k == s.keys.Outputs(run) {
				continue
			}
			n, err := rdb.MemoryUsage(ctx, k, 0).Result()
			if err != nil && err != redis.Nil {
				return 0, fmt.Errorf("memory usage %s: %w", k, err)
			}
			total += n
		}
		if cursor = next; cursor == 0 {
			return float64(total) / float64(nodes), nil
		}
	}
	return 0, fmt.Errorf("scan keys of run %s: more than %d steps", run, scanSteps)
}
