package worker

import "time"

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
