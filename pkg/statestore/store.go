package statestore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Store is Keys bound to one Redis client, so that a consumer can hold the
// operations it calls as a small interface of its own (the worker's claim
// path: ClaimAttempts, Heartbeat, ReleaseClaim, RenewLiveness) instead of a
// client and a Keys passed to every call. Each method is the Keys method of
// the same name on RDB; their rules are in the Keys methods' comments and
// in package statestoretest, which every Redis-protocol server the scripts
// run on must pass. Safe for concurrent use when RDB is (go-redis clients
// are).
type Store struct {
	Keys Keys
	// RDB is the client; build it with ContextTimeoutEnabled
	// (NewClient does) so that context deadlines bound every command.
	RDB redis.Cmdable
}

// ClaimAttempts is Keys.ClaimAttempts on s.RDB.
func (s Store) ClaimAttempts(ctx context.Context, reqs []ClaimRequest, worker string) ([]Claimed, error) {
	return s.Keys.ClaimAttempts(ctx, s.RDB, reqs, worker)
}

// Heartbeat is Keys.Heartbeat on s.RDB.
func (s Store) Heartbeat(ctx context.Context, a Attempt, worker string, ttl time.Duration) (ClaimResult, error) {
	return s.Keys.Heartbeat(ctx, s.RDB, a, worker, ttl)
}

// ReleaseClaim is Keys.ReleaseClaim on s.RDB.
func (s Store) ReleaseClaim(ctx context.Context, a Attempt, worker string) error {
	return s.Keys.ReleaseClaim(ctx, s.RDB, a, worker)
}

// RenewLiveness is Keys.RenewLiveness on s.RDB.
func (s Store) RenewLiveness(ctx context.Context, id, incarnation string, ttl time.Duration) (string, error) {
	return s.Keys.RenewLiveness(ctx, s.RDB, id, incarnation, ttl)
}
