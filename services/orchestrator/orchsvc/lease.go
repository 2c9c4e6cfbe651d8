package orchsvc

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
)

// refreshScript extends a lock if its value is still ours (bsm/redislock's
// own refresh, batched here into one pipeline for every held run).
//
//	KEYS[1] lock key  ARGV[1] token+metadata (the stored value)  ARGV[2] ttl ms
//	returns 1 extended, 0 not held
var refreshScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)

// leases keeps the run locks this orchestrator holds alive from their own
// goroutine, so a busy or blocked event loop never lets them lapse, and lets
// go of locks that went idle (so another orchestrator that now owns the
// run's partition can take it). Safe for concurrent use.
type leases struct {
	rdb  *redis.Client
	ttl  time.Duration
	idle time.Duration
	log  *slog.Logger

	mu sync.Mutex
	m  map[string]*lease
}

type lease struct {
	lock     *redislock.Lock
	lastUsed time.Time
}

func newLeases(rdb *redis.Client, ttl, idle time.Duration, log *slog.Logger) *leases {
	return &leases{rdb: rdb, ttl: ttl, idle: idle, log: log, m: map[string]*lease{}}
}

// add records a freshly obtained lock.
func (l *leases) add(run string, lock *redislock.Lock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m[run] = &lease{lock: lock, lastUsed: time.Now()}
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

// release lets go of run's lock now.
func (l *leases) release(ctx context.Context, run string) {
	l.mu.Lock()
	ls := l.m[run]
	delete(l.m, run)
	l.mu.Unlock()
	if ls != nil {
		l.releaseLock(ctx, run, ls.lock)
	}
}

func (l *leases) releaseLock(ctx context.Context, run string, lock *redislock.Lock) {
	if err := lock.Release(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, redislock.ErrLockNotHeld) {
		l.log.Warn("release run lock", "run_id", run, "err", err)
	}
}

// releaseAll lets go of every lock (shutdown).
func (l *leases) releaseAll(ctx context.Context) {
	l.mu.Lock()
	runs := make([]string, 0, len(l.m))
	for run := range l.m {
		runs = append(runs, run)
	}
	l.mu.Unlock()
	for _, run := range runs {
		l.release(ctx, run)
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
			l.maintain(ctx)
		}
	}
}

func (l *leases) maintain(ctx context.Context) {
	now := time.Now()
	l.mu.Lock()
	keep := make(map[string]*redislock.Lock, len(l.m))
	var idle []string
	for run, ls := range l.m {
		if now.Sub(ls.lastUsed) > l.idle {
			idle = append(idle, run)
		} else {
			keep[run] = ls.lock
		}
	}
	l.mu.Unlock()
	for _, run := range idle {
		l.release(ctx, run)
	}
	l.refresh(ctx, keep)
}

// refresh extends every lock in one pipeline; a lock found lost is forgotten.
func (l *leases) refresh(ctx context.Context, locks map[string]*redislock.Lock) {
	if len(locks) == 0 {
		return
	}
	pipe := l.rdb.Pipeline()
	cmds := make(map[string]*redis.Cmd, len(locks))
	for run, lock := range locks {
		cmds[run] = refreshScript.Eval(ctx, pipe, []string{lock.Key()}, lock.Token()+lock.Metadata(), l.ttl.Milliseconds())
	}
	if _, err := pipe.Exec(ctx); err != nil && ctx.Err() == nil {
		l.log.Warn("refresh run locks", "err", err)
		return
	}
	for run, c := range cmds {
		if v, err := c.Int64(); err == nil && v != 1 {
			l.log.Warn("lost run lock", "run_id", run)
			l.mu.Lock()
			if ls := l.m[run]; ls != nil && ls.lock == locks[run] {
				delete(l.m, run)
			}
			l.mu.Unlock()
		}
	}
}
