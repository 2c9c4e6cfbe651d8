package orchsvc

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/bsm/redislock"
)

// leaderLease is the lease of one cluster-wide duty (maintenance, the
// scheduler): a bsm/redislock lock taken without waiting and refreshed on
// every hold call, so whoever holds it keeps it while it keeps calling.
// A holder that dies stops refreshing; the lock expires after ttl and the
// next caller of hold elsewhere takes it. Not safe for concurrent use: one
// goroutine drives each lease.
type leaderLease struct {
	locker *redislock.Client
	key    string
	owner  string // orchestrator id, stored as the lock's metadata
	ttl    time.Duration
	log    *slog.Logger
	lock   *redislock.Lock
}

func newLeaderLease(locker *redislock.Client, key, owner string, ttl time.Duration, log *slog.Logger) *leaderLease {
	return &leaderLease{locker: locker, key: key, owner: owner, ttl: ttl, log: log}
}

// hold reports whether this orchestrator holds the lease now: it refreshes
// a lease it holds, or tries once to take a free one. When a refresh fails
// for another reason than losing the lock (Redis unreachable), it reports
// false but keeps the lock to refresh again: acting on a lease it cannot
// confirm could overlap with a new holder.
func (l *leaderLease) hold(ctx context.Context) bool {
	if l.lock != nil {
		err := l.lock.Refresh(ctx, l.ttl, nil)
		if err == nil {
			return true
		}
		if !errors.Is(err, redislock.ErrNotObtained) {
			return false
		}
		l.log.Warn("lost leader lease", "lease", l.key)
		l.lock = nil
	}
	lock, err := l.locker.Obtain(ctx, l.key, l.ttl, &redislock.Options{Metadata: l.owner})
	if err != nil {
		return false // ErrNotObtained: another orchestrator leads
	}
	l.log.Info("took leader lease", "lease", l.key)
	l.lock = lock
	return true
}

// release gives the lease up at once (graceful stop), so another
// orchestrator takes over without waiting for the ttl.
func (l *leaderLease) release(ctx context.Context) {
	if l.lock == nil {
		return
	}
	if err := l.lock.Release(ctx); err != nil && !errors.Is(err, redislock.ErrLockNotHeld) {
		l.log.Warn("release leader lease", "lease", l.key, "err", err)
	}
	l.lock = nil
}
