package orchsvc

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// acquireSetup is a Service with just what acquireAll uses, on its own Redis.
func acquireSetup(t *testing.T, lockWait time.Duration) *Service {
	t.Helper()
	rdb := testinfra.StartRedis(t).Client(t)
	require.NoError(t, statestore.LoadScripts(context.Background(), rdb))
	keys := statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}
	cfg := Config{ID: "orch-a", LockTTL: 5 * time.Second, LockWait: lockWait, IdleRelease: 3 * time.Second}
	return &Service{cfg: cfg, rdb: rdb, keys: keys, owned: map[string]*owned{}, fences: fenceMemory{},
		leases: newLeases(rdb, keys, cfg.LockTTL, cfg.IdleRelease, slog.New(slog.DiscardHandler))}
}

func startGroup(run string) *runBatch {
	return &runBatch{run: run, events: []inbound{{run: run, start: &eventsv1.RunStartRequested{RunId: run}}}}
}

func TestAcquireAllWaitsForLocksHeldElsewhere(t *testing.T) {
	t.Parallel()
	s := acquireSetup(t, 20*time.Second)
	ctx := context.Background()
	require.NoError(t, s.rdb.Set(ctx, s.keys.Lock("busy"), "tokenorch-b", 300*time.Millisecond).Err())
	groups := []*runBatch{startGroup("free"), startGroup("busy")}

	require.NoError(t, s.acquireAll(ctx, groups))
	require.EqualValues(t, 1, groups[1].o.fence, "busy: the fence moved only when the lock was had")
	require.Greater(t, groups[0].o.fence, int64(1), "free: let go and taken again while the batch waited")
	for _, g := range groups {
		require.NotNil(t, g.o, g.run)
		require.Equal(t, strconv.FormatInt(g.o.fence, 10), s.rdb.Get(ctx, s.keys.Fence(g.run)).Val(), g.run)
		require.Same(t, g.o, s.owned[g.run])
		v := s.rdb.Get(ctx, s.keys.Lock(g.run)).Val()
		require.True(t, strings.HasSuffix(v, "orch-a"), "%s: lock value %q", g.run, v)
		require.Equal(t, s.leases.value(g.run), v)
	}

	// Held runs are served from the cache: no new acquisition, no fence bump.
	again := []*runBatch{startGroup("free")}
	require.NoError(t, s.acquireAll(ctx, again))
	require.Same(t, groups[0].o, again[0].o)
	fence := groups[0].o.fence
	require.Equal(t, strconv.FormatInt(fence, 10), s.rdb.Get(ctx, s.keys.Fence("free")).Val())

	// A run whose lease was retired is taken over at once, with a new fence.
	s.retire("free")
	require.NoError(t, s.acquireAll(ctx, again))
	require.Equal(t, fence+1, again[0].o.fence)
}

func TestAcquireAllGivesUpAfterLockWait(t *testing.T) {
	t.Parallel()
	s := acquireSetup(t, 100*time.Millisecond)
	ctx := context.Background()
	require.NoError(t, s.rdb.Set(ctx, s.keys.Lock("busy"), "tokenorch-b", time.Minute).Err())
	err := s.acquireAll(ctx, []*runBatch{startGroup("free"), startGroup("busy")})
	require.ErrorContains(t, err, "lock run busy (and 0 more): held by another orchestrator")
	require.Equal(t, "tokenorch-b", s.rdb.Get(ctx, s.keys.Lock("busy")).Val())
	require.Zero(t, s.rdb.Exists(ctx, s.keys.Fence("busy")).Val(), "the fence of a run not taken never moves")
	require.False(t, s.leases.held("free"), "a batch that waits holds none of its locks")
	require.Zero(t, s.rdb.Exists(ctx, s.keys.Lock("free")).Val())
	require.Empty(t, s.owned)
}

func TestAcquireAllOfTwoOrchestratorsNeedingTheSameRunsDoesNotDeadlock(t *testing.T) {
	t.Parallel()
	a := acquireSetup(t, 15*time.Second)
	a.cfg.LockTTL = time.Minute // no lock may lapse on its own during the test
	b := &Service{cfg: a.cfg, rdb: a.rdb, keys: a.keys, owned: map[string]*owned{}, fences: fenceMemory{},
		leases: newLeases(a.rdb, a.keys, a.cfg.LockTTL, a.cfg.IdleRelease, slog.New(slog.DiscardHandler))}
	b.cfg.ID = "orch-b"
	ctx := context.Background()
	// Each holds one run the other's next batch needs (a rebalance).
	require.NoError(t, a.acquireAll(ctx, []*runBatch{startGroup("x")}))
	require.NoError(t, b.acquireAll(ctx, []*runBatch{startGroup("y")}))

	type outcome struct {
		s   *Service
		err error
	}
	done := make(chan outcome, 2)
	for _, s := range []*Service{a, b} {
		go func() {
			err := s.acquireAll(ctx, []*runBatch{startGroup("x"), startGroup("y")})
			if err == nil {
				s.disownAll(ctx) // its batch is done: let the other one have the runs
			}
			done <- outcome{s, err}
		}()
	}
	for range 2 {
		select {
		case o := <-done:
			require.NoError(t, o.err, o.s.cfg.ID)
		case <-time.After(2 * time.Minute):
			t.Fatal("acquireAll did not return")
		}
	}
}
