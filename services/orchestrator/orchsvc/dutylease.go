package orchsvc

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
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
	// predecessor, until the lease is first taken, is the Redis client with
	// which a lease still held under owner is dropped: with a stable
	// orchestrator id (Config.StableID) that holder is this process's
	// killed predecessor, and the new incarnation leads at once instead of
	// after the TTL. Nil otherwise.
	predecessor redis.Scripter
}

func newLeaderLease(locker *redislock.Client, key string, cfg Config, log *slog.Logger) *leaderLease {
	l := &leaderLease{locker: locker, key: key, owner: cfg.ID, ttl: cfg.LeaderTTL, log: log}
	if cfg.StableID {
		l.predecessor = cfg.Redis
	}
	return l
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
		l.log.Warn("lost leader lease", logkey.Lease, l.key)
		l.lock = nil
	}
	if l.predecessor != nil {
		if dropped, err := statestore.DropLockOf(ctx, l.predecessor, l.key, l.owner); err != nil {
			return false
		} else if dropped {
			l.log.Info("dropped the leader lease of a killed predecessor with this id", logkey.Lease, l.key)
		}
	}
	lock, err := l.locker.Obtain(ctx, l.key, l.ttl, &redislock.Options{Metadata: l.owner})
	if err != nil {
		return false // ErrNotObtained: another orchestrator leads
	}
	l.log.Info("took leader lease", logkey.Lease, l.key)
	l.lock, l.predecessor = lock, nil
	return true
}

// release gives the lease up at once (graceful stop), so another
// orchestrator takes over without waiting for the ttl.
func (l *leaderLease) release(ctx context.Context) {
	if l.lock == nil {
		return
	}
	if err := l.lock.Release(ctx); err != nil && !errors.Is(err, redislock.ErrLockNotHeld) {
		l.log.Warn("release leader lease", logkey.Lease, l.key, logkey.Err, err)
	}
	l.lock = nil
}
