package statestore_test

import (
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/bsm/redislock"
	"github.com/stretchr/testify/require"
)

func lockReq(run, value, prev string, light bool) statestore.LockRequest {
	return statestore.LockRequest{HeldLock: statestore.HeldLock{Run: run, Value: value}, Prev: prev, Light: light}
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
