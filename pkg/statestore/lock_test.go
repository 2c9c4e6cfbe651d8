package statestore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/bsm/redislock"
	"github.com/stretchr/testify/require"
)

func lockReq(run, value, prev string, light bool) statestore.LockRequest {
	return statestore.LockRequest{HeldLock: statestore.HeldLock{Run: run, Value: value}, Prev: prev, Light: light}
}

func TestAcquireRunsLocksFencesAndReadsInOneCall(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, b.rdb.HSet(b.ctx, b.keys.Run("pending"), statestore.FieldStatus, "pending").Err())
	require.NoError(t, b.rdb.HSet(b.ctx, b.keys.Run("started"), statestore.FieldStatus, "running").Err())
	require.NoError(t, b.rdb.HSet(b.ctx, b.keys.Nodes("started"), "A", `{"s":"queued","a":1}`).Err())
	require.NoError(t, b.rdb.HSet(b.ctx, b.keys.Outputs("started"), "A", `1`).Err())
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Fence("started"), 41, 0).Err())
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Lock("other"), "theirs", time.Minute).Err())
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Fence("other"), 7, 0).Err())

	reqs := []statestore.LockRequest{
		lockReq("pending", "v1", "", true),
		lockReq("started", "v2", "", false),
		lockReq("other", "v3", "", false),
		lockReq("restart", "v4", "", true), // a start of a run already started
	}
	require.NoError(t, b.rdb.HSet(b.ctx, b.keys.Nodes("restart"), "A", `{"s":"running","a":1}`).Err())
	got, err := b.keys.AcquireRuns(b.ctx, b.rdb, reqs, 5*time.Second)
	require.NoError(t, err)
	require.Len(t, got, 4)

	require.Equal(t, statestore.Acquired{Fence: 1}, got[0], "a pending run: locked, nothing to load")
	require.EqualValues(t, 42, got[1].Fence)
	require.Equal(t, map[string]string{"A": `{"s":"queued","a":1}`}, got[1].Stored.Nodes)
	require.Equal(t, map[string]string{"A": `1`}, got[1].Stored.Outputs)
	require.Equal(t, "running", got[1].Stored.Fields[statestore.FieldStatus])
	require.Equal(t, statestore.Acquired{}, got[2], "another holder's run is neither locked nor read")
	require.Equal(t, "7", b.rdb.Get(b.ctx, b.keys.Fence("other")).Val(), "the fence moves only with the lock")
	require.Equal(t, "theirs", b.rdb.Get(b.ctx, b.keys.Lock("other")).Val())
	require.True(t, got[3].NeedsLoad)
	require.EqualValues(t, 1, got[3].Fence)

	for i, run := range []string{"pending", "started", "restart"} {
		require.Equal(t, fmt.Sprintf("v%d", []int{1, 2, 4}[i]), b.rdb.Get(b.ctx, b.keys.Lock(run)).Val())
		ttl := b.rdb.PTTL(b.ctx, b.keys.Lock(run)).Val()
		require.Greater(t, ttl, 3*time.Second, run)
		require.LessOrEqual(t, ttl, 5*time.Second, run)
	}

	// A replay of the same request keeps the lock and moves the fence on.
	again, err := b.keys.AcquireRuns(b.ctx, b.rdb, reqs[:1], 5*time.Second)
	require.NoError(t, err)
	require.EqualValues(t, 2, again[0].Fence)
	// A new value is refused while the old one holds, unless it names the
	// old one as its predecessor.
	again, err = b.keys.AcquireRuns(b.ctx, b.rdb, []statestore.LockRequest{lockReq("pending", "v9", "", true)}, 5*time.Second)
	require.NoError(t, err)
	require.Zero(t, again[0].Fence)
	again, err = b.keys.AcquireRuns(b.ctx, b.rdb, []statestore.LockRequest{lockReq("pending", "v9", "v1", true)}, 5*time.Second)
	require.NoError(t, err)
	require.EqualValues(t, 3, again[0].Fence)
	require.Equal(t, "v9", b.rdb.Get(b.ctx, b.keys.Lock("pending")).Val())
	again, err = b.keys.AcquireRuns(b.ctx, b.rdb, []statestore.LockRequest{lockReq("other", "v8", "v3", true)}, 5*time.Second)
	require.NoError(t, err)
	require.Zero(t, again[0].Fence, "a predecessor value the lock does not hold takes nothing over")

	none, err := b.keys.AcquireRuns(b.ctx, b.rdb, nil, time.Second)
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestAcquireRunsAfterScriptFlushSaysNoScript(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, b.rdb.ScriptFlush(b.ctx).Err())
	_, err := b.keys.AcquireRuns(b.ctx, b.rdb, []statestore.LockRequest{lockReq("r", "v", "", false)}, time.Second)
	require.True(t, statestore.IsNoScript(err), "%v", err)
	require.NoError(t, statestore.LoadScripts(b.ctx, b.rdb))
	got, err := b.keys.AcquireRuns(b.ctx, b.rdb, []statestore.LockRequest{lockReq("r", "v", "", false)}, time.Second)
	require.NoError(t, err)
	require.EqualValues(t, 1, got[0].Fence)
}

func TestRefreshAndReleaseLocksTouchOnlyTheirValue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mine := []statestore.HeldLock{{Run: "a", Value: "va"}, {Run: "b", Value: "vb"}, {Run: "gone", Value: "vg"}}
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Lock("a"), "va", time.Second).Err())
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Lock("b"), "theirs", time.Second).Err())

	lost, err := b.keys.RefreshLocks(b.ctx, b.rdb, mine, time.Minute)
	require.NoError(t, err)
	require.Equal(t, mine[1:], lost)
	require.Greater(t, b.rdb.PTTL(b.ctx, b.keys.Lock("a")).Val(), 50*time.Second)
	require.LessOrEqual(t, b.rdb.PTTL(b.ctx, b.keys.Lock("b")).Val(), time.Second)

	require.NoError(t, b.keys.ReleaseLocks(b.ctx, b.rdb, mine))
	require.Zero(t, b.rdb.Exists(b.ctx, b.keys.Lock("a")).Val())
	require.Equal(t, "theirs", b.rdb.Get(b.ctx, b.keys.Lock("b")).Val())
	require.NoError(t, b.keys.ReleaseLocks(b.ctx, b.rdb, nil))
	lost, err = b.keys.RefreshLocks(b.ctx, b.rdb, nil, time.Minute)
	require.NoError(t, err)
	require.Empty(t, lost)
}

// TestAcquireRunsTakesOverOnlyItsOwnInstance: a lock whose holder is exactly
// the TakeOver name (a killed predecessor of the same stable instance) is
// taken at once and its fence bumped; locks of holders that merely share a
// prefix or suffix with it, or of anyone when TakeOver is empty, are not.
func TestAcquireRunsTakesOverOnlyItsOwnInstance(t *testing.T) {
	t.Parallel()
	b := setup(t)
	held := map[string]string{
		"mine":   statestore.NewLockValue("orch-1"),
		"suffix": statestore.NewLockValue("b-orch-1"),
		"prefix": statestore.NewLockValue("orch-10"),
		"short":  "orch-1",
	}
	for run, v := range held {
		require.NoError(t, b.rdb.Set(b.ctx, b.keys.Lock(run), v, time.Minute).Err())
		require.NoError(t, b.rdb.Set(b.ctx, b.keys.Fence(run), 5, 0).Err())
	}
	ask := func(run, takeOver string) int64 {
		r := lockReq(run, statestore.NewLockValue("orch-1"), "", true)
		r.TakeOver = takeOver
		got, err := b.keys.AcquireRuns(b.ctx, b.rdb, []statestore.LockRequest{r}, time.Minute)
		require.NoError(t, err)
		if got[0].Fence > 0 {
			require.Equal(t, r.Value, b.rdb.Get(b.ctx, b.keys.Lock(run)).Val(), "run %s: lock not ours after a takeover", run)
		}
		return got[0].Fence
	}
	require.Zero(t, ask("mine", ""), "taken over without TakeOver")
	require.EqualValues(t, 6, ask("mine", "orch-1"))
	for _, run := range []string{"suffix", "prefix", "short"} {
		require.Zero(t, ask(run, "orch-1"), "run %s: another holder's lock taken over", run)
		require.Equal(t, held[run], b.rdb.Get(b.ctx, b.keys.Lock(run)).Val())
	}
	require.Len(t, statestore.NewLockValue("x"), statestore.LockTokenLen+1)
}

// TestDropLockOfDropsOnlyThatHolder: a leader lease as bsm/redislock writes
// it (a random token, then the holder's name) is dropped for exactly its
// holder; leases of names sharing a prefix or suffix, a bare name and a
// free key are left alone.
func TestDropLockOfDropsOnlyThatHolder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	locker := redislock.New(b.rdb)
	mine, err := locker.Obtain(b.ctx, "lease:mine", time.Minute, &redislock.Options{Metadata: "orch-1"})
	require.NoError(t, err)
	others := map[string]string{
		"lease:suffix": statestore.NewLockValue("b-orch-1"),
		"lease:prefix": statestore.NewLockValue("orch-10"),
		"lease:short":  "orch-1",
	}
	for k, v := range others {
		require.NoError(t, b.rdb.Set(b.ctx, k, v, time.Minute).Err())
	}
	for k := range others {
		dropped, err := statestore.DropLockOf(b.ctx, b.rdb, k, "orch-1")
		require.NoError(t, err)
		require.False(t, dropped, k)
		require.Equal(t, others[k], b.rdb.Get(b.ctx, k).Val())
	}
	dropped, err := statestore.DropLockOf(b.ctx, b.rdb, "lease:free", "orch-1")
	require.NoError(t, err)
	require.False(t, dropped)
	dropped, err = statestore.DropLockOf(b.ctx, b.rdb, "lease:mine", "")
	require.NoError(t, err)
	require.False(t, dropped, "an empty holder drops nothing")
	dropped, err = statestore.DropLockOf(b.ctx, b.rdb, "lease:mine", "orch-1")
	require.NoError(t, err)
	require.True(t, dropped)
	_, err = locker.Obtain(b.ctx, "lease:mine", time.Minute, &redislock.Options{Metadata: "orch-1"})
	require.NoError(t, err, "the lease is free again")
	require.ErrorIs(t, mine.Refresh(b.ctx, time.Minute, nil), redislock.ErrNotObtained, "the old holder no longer holds it")
}
