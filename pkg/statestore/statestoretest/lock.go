package statestoretest

import (
	"fmt"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/stretchr/testify/require"
)

func lockReq(run, value, prev string, light bool) statestore.LockRequest {
	return statestore.LockRequest{HeldLock: statestore.HeldLock{Run: run, Value: value}, Prev: prev, Light: light}
}

// acquire runs AcquireRuns for reqs with a 5 s TTL.
func (e env) acquire(t *testing.T, reqs ...statestore.LockRequest) []statestore.Acquired {
	t.Helper()
	got, err := e.keys.AcquireRuns(e.ctx, e.rdb, reqs, 5*time.Second)
	require.NoError(t, err)
	require.Len(t, got, len(reqs))
	return got
}

// testLockAcquire: acquiring a run's lock moves its fence (and only then)
// and reads the run in the same step; a lock held under another value is
// neither taken nor read, unless the request names that value as its own
// predecessor. A replay by the holder keeps the lock and moves the fence.
func testLockAcquire(t *testing.T, e env) {
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Run("pending"), records.FieldStatus, "pending").Err())
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Run("started"), records.FieldStatus, "running").Err())
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Nodes("started"), "A", `{"s":"queued","a":1}`).Err())
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Outputs("started"), "A", `1`).Err())
	require.NoError(t, e.rdb.Set(e.ctx, e.keys.Fence("started"), 41, 0).Err())
	require.NoError(t, e.rdb.Set(e.ctx, e.keys.Lock("other"), "theirs", time.Minute).Err())
	require.NoError(t, e.rdb.Set(e.ctx, e.keys.Fence("other"), 7, 0).Err())
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Nodes("restart"), "A", `{"s":"running","a":1}`).Err())

	reqs := []statestore.LockRequest{
		lockReq("pending", "v1", "", true), lockReq("started", "v2", "", false),
		lockReq("other", "v3", "", false), lockReq("restart", "v4", "", true), // a start of a run already started
	}
	got := e.acquire(t, reqs...)
	require.Equal(t, statestore.Acquired{Fence: 1}, got[0], "a pending run: locked, nothing to load")
	require.EqualValues(t, 42, got[1].Fence)
	require.Equal(t, map[string]string{"A": `{"s":"queued","a":1}`}, got[1].Stored.Nodes)
	require.Equal(t, map[string]string{"A": `1`}, got[1].Stored.Outputs)
	require.Equal(t, "running", got[1].Stored.Fields[records.FieldStatus])
	require.Equal(t, statestore.Acquired{}, got[2], "another holder's run is neither locked nor read")
	require.Equal(t, "7", e.rdb.Get(e.ctx, e.keys.Fence("other")).Val(), "the fence moves only with the lock")
	require.Equal(t, "theirs", e.rdb.Get(e.ctx, e.keys.Lock("other")).Val())
	require.True(t, got[3].NeedsLoad)
	require.EqualValues(t, 1, got[3].Fence)
	for i, run := range []string{"pending", "started", "restart"} {
		require.Equal(t, fmt.Sprintf("v%d", []int{1, 2, 4}[i]), e.rdb.Get(e.ctx, e.keys.Lock(run)).Val())
		ttl := e.rdb.PTTL(e.ctx, e.keys.Lock(run)).Val()
		require.Greater(t, ttl, 3*time.Second, run)
		require.LessOrEqual(t, ttl, 5*time.Second, run)
	}

	require.EqualValues(t, 2, e.acquire(t, reqs[0])[0].Fence, "a replay keeps the lock and moves the fence")
	require.Zero(t, e.acquire(t, lockReq("pending", "v9", "", true))[0].Fence, "a new value is refused while the old one holds")
	require.EqualValues(t, 3, e.acquire(t, lockReq("pending", "v9", "v1", true))[0].Fence, "…unless it names the old one")
	require.Equal(t, "v9", e.rdb.Get(e.ctx, e.keys.Lock("pending")).Val())
	require.Zero(t, e.acquire(t, lockReq("other", "v8", "v3", true))[0].Fence,
		"a predecessor value the lock does not hold takes nothing over")
	require.Empty(t, e.acquire(t))
}

// testLockRefreshRelease: refreshing extends only the locks still held
// under the caller's value and reports the others as lost; releasing
// deletes only those; both accept nothing to do.
func testLockRefreshRelease(t *testing.T, e env) {
	mine := []statestore.HeldLock{{Run: "a", Value: "va"}, {Run: "b", Value: "vb"}, {Run: "gone", Value: "vg"}}
	require.NoError(t, e.rdb.Set(e.ctx, e.keys.Lock("a"), "va", time.Second).Err())
	require.NoError(t, e.rdb.Set(e.ctx, e.keys.Lock("b"), "theirs", time.Second).Err())

	lost, err := e.keys.RefreshLocks(e.ctx, e.rdb, mine, time.Minute)
	require.NoError(t, err)
	require.Equal(t, mine[1:], lost)
	require.Greater(t, e.rdb.PTTL(e.ctx, e.keys.Lock("a")).Val(), 50*time.Second)
	require.LessOrEqual(t, e.rdb.PTTL(e.ctx, e.keys.Lock("b")).Val(), time.Second)

	require.NoError(t, e.keys.ReleaseLocks(e.ctx, e.rdb, mine))
	require.Zero(t, e.rdb.Exists(e.ctx, e.keys.Lock("a")).Val())
	require.Equal(t, "theirs", e.rdb.Get(e.ctx, e.keys.Lock("b")).Val())
	require.NoError(t, e.keys.ReleaseLocks(e.ctx, e.rdb, nil))
	lost, err = e.keys.RefreshLocks(e.ctx, e.rdb, nil, time.Minute)
	require.NoError(t, err)
	require.Empty(t, lost)
}
