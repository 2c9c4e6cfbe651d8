package orchsvc

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/bsm/redislock"
	"github.com/stretchr/testify/require"
)

// TestLeaderLeaseOfAKilledPredecessor: a lease left by a killed orchestrator
// is taken at once by its successor under the same stable id, and only
// then; a successor without a stable id, or with another id, waits for the
// TTL like any other orchestrator.
func TestLeaderLeaseOfAKilledPredecessor(t *testing.T) {
	t.Parallel()
	rdb := testinfra.StartRedis(t).Client(t)
	ctx := context.Background()
	locker := redislock.New(rdb)
	key := testinfra.UniqueName(t, "lease")
	lease := func(id string, stable bool) *leaderLease {
		cfg := Config{ID: id, StableID: stable, LeaderTTL: time.Minute, Redis: rdb}
		return newLeaderLease(locker, key, cfg, slog.New(slog.DiscardHandler))
	}
	predecessor := lease("orch-1", true)
	require.True(t, predecessor.hold(ctx))
	// Killed: it never refreshes nor releases again.

	require.False(t, lease("orch-1", false).hold(ctx), "without a stable id the name proves nothing")
	require.False(t, lease("orch-2", true).hold(ctx), "another orchestrator's lease is not taken over")
	successor := lease("orch-1", true)
	require.True(t, successor.hold(ctx), "the same stable id leads at once")
	require.True(t, successor.hold(ctx), "and keeps the lease it took")
	require.False(t, predecessor.hold(ctx), "the predecessor's lock is gone")

	// A lease it loses (expired, taken by another) stays lost.
	require.NoError(t, rdb.Del(ctx, key).Err())
	require.True(t, lease("orch-2", false).hold(ctx))
	require.False(t, successor.hold(ctx))
}
