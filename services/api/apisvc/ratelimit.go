package apisvc

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// buckets holds one token bucket per client (see clientOf). Safe for
// concurrent use.
//
// Clients named by address are not bounded in number, so idle buckets are
// forgotten: a bucket unused for refill (the time it takes to fill from
// empty) is full again, and a new one is the same, so dropping it changes
// nothing. Sweeps run when the map has doubled since the last one, which
// keeps their cost O(1) per request.
type buckets struct {
	limit  rate.Limit
	burst  int
	refill time.Duration

	mu      sync.Mutex
	m       map[string]*bucket
	sweepAt int
}

// bucket is one client's limiter and when it was last used.
type bucket struct {
	lim  *rate.Limiter
	used time.Time
}

// minSweep is the map size below which idle buckets are not swept.
const minSweep = 1024

// newBuckets returns buckets of perSecond requests and burst, or nil (no
// limit) when perSecond is NoLimit.
func newBuckets(perSecond float64, burst int) *buckets {
	if perSecond == NoLimit {
		return nil
	}
	refill := time.Duration(float64(burst) / perSecond * float64(time.Second))
	return &buckets{limit: rate.Limit(perSecond), burst: burst, refill: refill, m: map[string]*bucket{}, sweepAt: minSweep}
}

// take spends one of client's tokens at now. When none is left it spends
// nothing and returns how long until one is.
func (b *buckets) take(client string, now time.Time) (ok bool, wait time.Duration) {
	r := b.get(client, now).ReserveN(now, 1)
	if !r.OK() { // cannot happen with burst >= 1; refuse rather than wait forever
		return false, time.Second
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// get returns client's limiter, creating it (and sweeping) as needed.
func (b *buckets) get(client string, now time.Time) *rate.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.m[client]
	if e == nil {
		if len(b.m) >= b.sweepAt {
			b.sweep(now)
		}
		e = &bucket{lim: rate.NewLimiter(b.limit, b.burst)}
		b.m[client] = e
	}
	e.used = now
	return e.lim
}

// sweep forgets the buckets idle for refill or longer. b.mu is held.
func (b *buckets) sweep(now time.Time) {
	for k, e := range b.m {
		if now.Sub(e.used) >= b.refill {
			delete(b.m, k)
		}
	}
	b.sweepAt = max(minSweep, 2*len(b.m))
}

// size is how many buckets are held (tests).
func (b *buckets) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

// retryAfter is the Retry-After value for a wait: whole seconds, at least 1.
func retryAfter(wait time.Duration) int {
	return max(1, int(math.Ceil(wait.Seconds())))
}
