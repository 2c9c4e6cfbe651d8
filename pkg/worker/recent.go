package worker

import (
	"hash/maphash"
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
//
// It is asked about every dispatch and told of every claim and result, so
// its map is kept small: a 64-bit fingerprint of the attempt (fingerprint)
// to the attempt's slot in a ring that holds the attempts themselves,
// rather than a map keyed by the attempt (two strings and two ints, hashed
// and compared in full on every lookup). A fingerprint is only a hint:
// each lookup compares the attempt in the slot, and an attempt whose
// fingerprint collides with a remembered one's takes its place (the other
// is forgotten early, as if evicted).
type recent struct {
	mu   sync.Mutex
	at   map[uint64]int32 // fingerprint → ring slot
	ring []recentSlot     // insertion order, for eviction
	next int
}

// recentSlot is one remembered attempt.
type recentSlot struct {
	id statestore.Attempt
	fp uint64
	// left is when the attempt left this worker's flight (zero while it
	// runs here).
	left time.Time
}

func newRecent() *recent {
	return &recent{at: make(map[uint64]int32, recentCap), ring: make([]recentSlot, 0, recentCap)}
}

// fingerprintSeed seeds every worker's fingerprints (per process).
var fingerprintSeed = maphash.MakeSeed()

// fingerprint hashes attempt a for recent and for a batch's duplicate check.
func fingerprint(a statestore.Attempt) uint64 {
	h := maphash.String(fingerprintSeed, a.Run)*0x9e3779b97f4a7c15 ^ maphash.String(fingerprintSeed, a.Node)
	h ^= uint64(a.Instance)<<24 ^ uint64(a.Attempt)
	// murmur3's finaliser, so that the ints reach every bit
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// slot is a's slot in the ring, or -1; r.mu is held.
func (r *recent) slot(a statestore.Attempt, fp uint64) int {
	i, ok := r.at[fp]
	if !ok || r.ring[i].id != a {
		return -1
	}
	return int(i)
}

// add remembers a, whose fingerprint is fp, forgetting the oldest attempt
// when full.
func (r *recent) add(a statestore.Attempt, fp uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slot(a, fp) >= 0 {
		return
	}
	s := recentSlot{id: a, fp: fp}
	var i int
	if len(r.ring) < recentCap {
		i = len(r.ring)
		r.ring = append(r.ring, s)
	} else {
		i = r.next
		if old := r.ring[i]; r.at[old.fp] == int32(i) {
			delete(r.at, old.fp)
		}
		r.ring[i] = s
		r.next = (r.next + 1) % recentCap
	}
	r.at[fp] = int32(i)
}

// left records that a (fingerprint fp) left this worker's flight at t (its
// result published, or given up); nothing when a is not remembered.
func (r *recent) left(a statestore.Attempt, fp uint64, t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := r.slot(a, fp); i >= 0 {
		r.ring[i].left = t
	}
}

// leftWithin reports whether a (fingerprint fp) left this worker's flight
// less than d before now, or is still in it.
func (r *recent) leftWithin(a statestore.Attempt, fp uint64, now time.Time, d time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.slot(a, fp)
	return i >= 0 && (r.ring[i].left.IsZero() || now.Sub(r.ring[i].left) < d)
}

// has reports whether a (fingerprint fp) was claimed lately by this worker.
func (r *recent) has(a statestore.Attempt, fp uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.slot(a, fp) >= 0
}

// len is how many attempts are remembered.
func (r *recent) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.at)
}
