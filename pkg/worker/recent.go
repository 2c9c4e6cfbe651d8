package worker

import (
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
)

// recentCap bounds how many claimed attempts a worker remembers.
const recentCap = 4096

// recent remembers the attempts this worker claimed lately. The claim script
// answers "mine" to the worker that holds a claim (so that a retried claim
// call is harmless); recent tells such a retry, to run, from a duplicate of a
// dispatch delivered to the same worker, to drop (see Worker.claimed).
// Safe for concurrent use.
type recent struct {
	mu sync.Mutex
	// set maps each attempt to when it left this worker's flight (zero
	// while it runs here).
	set  map[statestore.Attempt]time.Time
	ring []statestore.Attempt // insertion order, for eviction
	next int
}

func newRecent() *recent {
	return &recent{set: make(map[statestore.Attempt]time.Time, recentCap), ring: make([]statestore.Attempt, 0, recentCap)}
}

// add remembers a, forgetting the oldest attempt when full.
func (r *recent) add(a statestore.Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.set[a]; ok {
		return
	}
	if len(r.ring) < recentCap {
		r.ring = append(r.ring, a)
	} else {
		delete(r.set, r.ring[r.next])
		r.ring[r.next] = a
		r.next = (r.next + 1) % recentCap
	}
	r.set[a] = time.Time{}
}

// left records that a left this worker's flight at t (its result
// published, or given up); nothing when a is not remembered.
func (r *recent) left(a statestore.Attempt, t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.set[a]; ok {
		r.set[a] = t
	}
}

// leftWithin reports whether a left this worker's flight less than d
// before now, or is still in it.
func (r *recent) leftWithin(a statestore.Attempt, now time.Time, d time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.set[a]
	return ok && (t.IsZero() || now.Sub(t) < d)
}

// has reports whether a was claimed lately by this worker.
func (r *recent) has(a statestore.Attempt) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.set[a]
	return ok
}
