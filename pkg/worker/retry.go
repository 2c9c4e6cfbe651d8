package worker

import (
	"context"
	"time"
)

// Retry pacing for Redis and Kafka errors: 50ms doubling to at most 2s.
const (
	backoffBase = 50 * time.Millisecond
	backoffMax  = 2 * time.Second
)

// backoff is the pause before retry number try+1 (try counts from 0).
func backoff(try int) time.Duration {
	if try >= 6 { // 50ms << 6 already exceeds backoffMax
		return backoffMax
	}
	return min(backoffBase<<try, backoffMax)
}

// sleepCtx waits for d; false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
