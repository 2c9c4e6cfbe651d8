package orchsvc

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
)

// leases keeps the run locks this orchestrator holds alive from their own
// goroutine, so a busy or blocked event loop never lets them lapse, and lets
// go of locks that went idle or whose run ended (so another orchestrator
// that now owns the run's partition can take it). Refreshes and releases
// are one pipeline per tick. Safe for concurrent use.
type leases struct {
	rdb  redis.UniversalClient
	keys statestore.Keys
	ttl  time.Duration
	idle time.Duration
	log  *slog.Logger

	mu sync.Mutex
	m  map[string]*lease
}

type lease struct {
	value    string // the lock's value: a random token + the orchestrator id
	lastUsed time.Time
	// pending marks a lease recorded before the pipeline that takes its lock
	// has run (an optimistic start): until confirm, a tick neither refreshes
	// it nor takes a missing lock for a lost one.
	pending bool
}

func newLeases(rdb redis.UniversalClient, keys statestore.Keys, ttl, idle time.Duration, log *slog.Logger) *leases {
	return &leases{rdb: rdb, keys: keys, ttl: ttl, idle: idle, log: log, m: map[string]*lease{}}
}

// lockValue is a new lock value naming holder (statestore.NewLockValue).
func lockValue(holder string) string { return statestore.NewLockValue(holder) }

// add records a freshly obtained lock, replacing any previous lease of run.
func (l *leases) add(run, value string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m[run] = &lease{value: value, lastUsed: time.Now()}
}

// addPending records a lock about to be taken in a pipeline that has not
// run yet (see lease.pending); confirm or take settles it.
func (l *leases) addPending(run, value string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m[run] = &lease{value: value, lastUsed: time.Now(), pending: true}
}

// confirm records that the pending lease of run with value now holds its
// lock.
func (l *leases) confirm(run, value string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls := l.m[run]; ls != nil && ls.value == value {
		ls.pending = false
	}
}

// value is the value of run's lease, "" when there is none.
func (l *leases) value(run string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls := l.m[run]; ls != nil {
		return ls.value
	}
	return ""
}

// touch marks run's lock as used and reports whether it is still held.
func (l *leases) touch(run string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := l.m[run]
	if ls == nil {
		return false
	}
	ls.lastUsed = time.Now()
	return true
}

// held reports whether run's lock is still held, without marking it used.
func (l *leases) held(run string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[run] != nil
}

// retire lets the next tick release run's lock, as if it had been idle for
// long: its run ended. Until then a new lock request for the run takes the
// lease over (statestore.LockRequest.Prev).
func (l *leases) retire(run string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls := l.m[run]; ls != nil {
		ls.lastUsed = time.Time{}
	}
}

// take removes the leases of runs (every lease when runs is nil) and
// returns their locks.
func (l *leases) take(runs []string) []statestore.HeldLock {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []statestore.HeldLock
	drop := func(run string) {
		if ls := l.m[run]; ls != nil {
			out = append(out, statestore.HeldLock{Run: run, Value: ls.value})
			delete(l.m, run)
		}
	}
	if runs != nil {
		for _, run := range runs {
			drop(run)
		}
		return out
	}
	for run := range l.m {
		drop(run)
	}
	return out
}

// releaseAll lets go of every lock now, in one pipeline (a failed batch,
// shutdown).
func (l *leases) releaseAll(ctx context.Context) {
	l.releaseLocks(ctx, l.take(nil))
}

func (l *leases) releaseLocks(ctx context.Context, locks []statestore.HeldLock) {
	if err := l.keys.ReleaseLocks(context.WithoutCancel(ctx), l.rdb, locks); err != nil {
		l.log.Warn("release run locks; they expire instead", logkey.Locks, len(locks), logkey.Err, err)
	}
}

// keepAlive refreshes held locks every tick and releases idle ones until ctx ends.
func (l *leases) keepAlive(ctx context.Context, tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.maintain(ctx, time.Now())
		}
	}
}

// maintain releases the locks idle for longer than idle (or retired) and
// refreshes the others but the pending ones (their pipeline sets the TTL):
// one pipeline each. Picking and forgetting the idle ones is one step
// under mu, so a lease the event loop touched in between is never released
// under it.
func (l *leases) maintain(ctx context.Context, now time.Time) {
	l.mu.Lock()
	var idle, keep []statestore.HeldLock
	kept := make(map[string]*lease, len(l.m))
	for run, ls := range l.m {
		hl := statestore.HeldLock{Run: run, Value: ls.value}
		if ls.pending {
			continue
		}
		if now.Sub(ls.lastUsed) > l.idle {
			idle = append(idle, hl)
			delete(l.m, run)
		} else {
			keep = append(keep, hl)
			kept[run] = ls
		}
	}
	l.mu.Unlock()
	l.releaseLocks(ctx, idle)
	l.refresh(ctx, keep, kept)
}

// refresh extends every lock in one pipeline; a lock found lost is
// forgotten, unless the event loop let it go or replaced it by a newer
// lease meanwhile (then it was not lost, only no longer this lease).
func (l *leases) refresh(ctx context.Context, locks []statestore.HeldLock, kept map[string]*lease) {
	lost, err := l.keys.RefreshLocks(ctx, l.rdb, locks, l.ttl)
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("refresh run locks", logkey.Err, err)
		}
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, hl := range lost {
		if l.m[hl.Run] != kept[hl.Run] {
			continue
		}
		l.log.Warn("lost run lock", logkey.RunID, hl.Run)
		delete(l.m, hl.Run)
	}
}
