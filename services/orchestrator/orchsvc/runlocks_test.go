package orchsvc

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/stretchr/testify/require"
)

func TestLeasesReleaseIdleAndRetiredLocksAndRefreshTheRest(t *testing.T) {
	t.Parallel()
	rdb := testinfra.StartRedis(t).Client(t)
	ctx := context.Background()
	keys := statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}
	l := newLeases(rdb, keys, time.Minute, 3*time.Second, slog.New(slog.DiscardHandler))
	now := time.Now()
	for _, run := range []string{"busy", "idle", "ended", "stolen"} {
		v := lockValue("orch-1")
		require.True(t, strings.HasSuffix(v, "orch-1"), "a lock names its holder")
		require.NoError(t, rdb.Set(ctx, keys.Lock(run), v, 10*time.Second).Err())
		l.add(run, v)
	}
	require.NotEqual(t, l.value("busy"), l.value("idle"), "every acquisition draws its own token")
	l.m["idle"].lastUsed = now.Add(-4 * time.Second)
	l.retire("ended")
	require.NoError(t, rdb.Set(ctx, keys.Lock("stolen"), "someone else", 10*time.Second).Err())

	l.maintain(ctx, now)

	require.True(t, l.held("busy"))
	require.Greater(t, rdb.PTTL(ctx, keys.Lock("busy")).Val(), 50*time.Second, "a used lock is refreshed")
	for _, run := range []string{"idle", "ended"} {
		require.False(t, l.held(run), run)
		require.Zero(t, rdb.Exists(ctx, keys.Lock(run)).Val(), "%s: released in Redis", run)
	}
	require.False(t, l.held("stolen"), "a lost lock is forgotten")
	require.Equal(t, "someone else", rdb.Get(ctx, keys.Lock("stolen")).Val(), "and left to its holder")

	l.releaseAll(ctx)
	require.False(t, l.held("busy"))
	require.Zero(t, rdb.Exists(ctx, keys.Lock("busy")).Val())
}

// TestLeasesPendingAndLetGoLocksAreNotLost: a lease recorded before the
// pipeline that takes its lock has run (an optimistic start) is neither
// refreshed nor taken for lost by a tick meanwhile, and is refreshed once
// confirmed; a lock the event loop let go of between a tick's snapshot and
// its refresh is not reported lost. Only a lock that another holder took
// from a lease still held is.
func TestLeasesPendingAndLetGoLocksAreNotLost(t *testing.T) {
	t.Parallel()
	rdb := testinfra.StartRedis(t).Client(t)
	ctx := context.Background()
	keys := statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}
	logs := &strings.Builder{}
	l := newLeases(rdb, keys, time.Minute, 3*time.Second, slog.New(slog.NewTextHandler(logs, nil)))

	v := lockValue("orch-1")
	l.addPending("starting", v)
	l.maintain(ctx, time.Now()) // the start's pipeline has not taken the lock yet
	require.True(t, l.held("starting"), "a pending lease is kept")
	require.Zero(t, rdb.Exists(ctx, keys.Lock("starting")).Val(), "and its lock not created by a refresh")
	require.NoError(t, rdb.Set(ctx, keys.Lock("starting"), v, 10*time.Second).Err()) // the pipeline ran
	l.confirm("starting", v)
	l.maintain(ctx, time.Now())
	require.Greater(t, rdb.PTTL(ctx, keys.Lock("starting")).Val(), 50*time.Second, "a confirmed lease is refreshed")

	for _, run := range []string{"let-go", "stolen"} {
		value := lockValue("orch-1")
		require.NoError(t, rdb.Set(ctx, keys.Lock(run), value, 10*time.Second).Err())
		l.add(run, value)
	}
	keep := []statestore.HeldLock{{Run: "let-go", Value: l.value("let-go")}, {Run: "stolen", Value: l.value("stolen")}}
	kept := map[string]*lease{"let-go": l.m["let-go"], "stolen": l.m["stolen"]}
	l.releaseLocks(ctx, l.take([]string{"let-go"})) // the event loop, between the snapshot and the refresh
	require.NoError(t, rdb.Set(ctx, keys.Lock("stolen"), "someone else", 10*time.Second).Err())
	l.refresh(ctx, keep, kept)
	require.NotContains(t, logs.String(), "run_id=let-go", "a lock let go of is not lost")
	require.Contains(t, logs.String(), `msg="lost run lock" run_id=stolen`)
	require.False(t, l.held("stolen"))
	require.True(t, l.held("starting"))
	require.Equal(t, 1, strings.Count(logs.String(), "lost run lock"), logs.String())
}
