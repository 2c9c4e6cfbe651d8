package floor

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Throughput keeps inflight records circulating — each consumed batch is
// stored with one pipelined HSET per record, every record's next hop is
// published in one call, and the batch is committed, as the orchestrator
// does — until total hops were consumed. It returns hops per second,
// counted from the first consumed record (after the group join).
func (l *Loop) Throughput(ctx context.Context, total, inflight int) (float64, error) {
	for i := range inflight {
		if err := l.publish(ctx, "tp"+strconv.Itoa(i), 0); err != nil {
			return 0, err
		}
	}
	var start time.Time
	consumed, first, outstanding := 0, 0, inflight
	for outstanding > 0 {
		fctx, cancel := context.WithTimeout(ctx, joinTimeout)
		msgs, err := l.cons.Fetch(fctx, fetchLimit)
		cancel()
		if err != nil {
			return 0, fmt.Errorf("floor throughput after %d hops: %w", consumed, err)
		}
		if start.IsZero() {
			start, first = time.Now(), len(msgs)
		}
		consumed += len(msgs)
		outstanding -= len(msgs)
		// Stop feeding once enough hops are under way; drain the rest.
		feed := consumed < total
		if feed {
			outstanding += len(msgs)
		}
		if err := l.hop(ctx, msgs, feed); err != nil {
			return 0, fmt.Errorf("floor throughput after %d hops: %w", consumed, err)
		}
	}
	elapsed := time.Since(start).Seconds()
	return float64(consumed-first) / elapsed, nil
}
