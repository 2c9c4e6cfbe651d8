package statestoretest

import (
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/stretchr/testify/require"
)

// write runs w alone in a pipeline, as the orchestrator does with many,
// and returns its outcome.
func (e env) write(t *testing.T, w statestore.RunWrite) int64 {
	t.Helper()
	pipe := e.rdb.Pipeline()
	cmd := e.keys.QueueWrite(e.ctx, pipe, w)
	_, err := pipe.Exec(e.ctx)
	require.NoError(t, err)
	n, ok := cmd.Val().(int64)
	require.True(t, ok, "write answered %v", cmd.Val())
	return n
}

// snapshot is every hash of a run that a write sets.
type snapshot struct{ run, nodes, outputs map[string]string }

func (e env) snapshot(t *testing.T, run string) snapshot {
	t.Helper()
	get := func(key string) map[string]string {
		m, err := e.rdb.HGetAll(e.ctx, key).Result()
		require.NoError(t, err)
		return m
	}
	return snapshot{get(e.keys.Run(run)), get(e.keys.Nodes(run)), get(e.keys.Outputs(run))}
}

// lock takes run's lock for value as an acquisition does (the lock set,
// the fence bumped) and returns the new fence.
func (e env) lock(t *testing.T, run, value string) int64 {
	t.Helper()
	require.NoError(t, e.rdb.Set(e.ctx, e.keys.Lock(run), value, time.Minute).Err())
	fence, err := e.rdb.Incr(e.ctx, e.keys.Fence(run)).Result()
	require.NoError(t, err)
	return fence
}

// testFencedWrite: a write carries the fence its writer got with the
// run's lock, and is refused, changing nothing, once the fence moved on
// (another holder took the run): a stale holder cannot write. A create is
// refused once the run's node records exist.
func testFencedWrite(t *testing.T, e env) {
	old := e.lock(t, "r1", "old")
	w := statestore.RunWrite{Run: "r1", Fence: old, Lock: "old", Create: true,
		RunFields: map[string]string{records.FieldStatus: "running"},
		Nodes:     map[string][]byte{"A": []byte(`{"s":"queued","a":1}`)},
		Outputs:   map[string][]byte{"A": []byte(`1`)}, History: []string{"h1"}}
	require.EqualValues(t, statestore.WriteApplied, e.write(t, w))
	require.EqualValues(t, statestore.WriteExists, e.write(t, w), "a second create is refused")

	newer := e.lock(t, "r1", "newer") // another holder took the lock
	before := e.snapshot(t, "r1")
	w.Create, w.RunFields = false, map[string]string{records.FieldStatus: "failed"}
	w.Nodes = map[string][]byte{"A": []byte(`{"s":"failed","a":1}`)}
	require.EqualValues(t, statestore.WriteStale, e.write(t, w), "the stale holder is fenced off")
	require.Equal(t, before, e.snapshot(t, "r1"), "a refused write changed the run")
	require.Equal(t, int64(1), e.rdb.LLen(e.ctx, e.keys.History("r1")).Val())

	w.Fence, w.Lock, w.ClearOutputs = newer, "newer", []string{"A"}
	require.EqualValues(t, statestore.WriteApplied, e.write(t, w))
	st, err := e.keys.LoadRun(e.ctx, e.rdb, "r1")
	require.NoError(t, err)
	require.Equal(t, "failed", st.Fields[records.FieldStatus])
	require.Empty(t, st.Outputs)
	require.Equal(t, int64(2), e.rdb.LLen(e.ctx, e.keys.History("r1")).Val())
}

// testWriteNeedsTheLock: a write is refused, changing nothing, unless the
// run's lock still holds the writer's value, even with the current fence.
// A Redis failover can lose its master's newest writes — a holder's lock
// SET and fence INCR together, one script's effects — and the next holder
// then gets the same fence again: the lock's value is what tells the two
// holders apart. A writer whose lock expired is refused too (it reloads).
func testWriteNeedsTheLock(t *testing.T, e env) {
	write := func(fence int64, lock, status string) int64 {
		return e.write(t, statestore.RunWrite{Run: "r1", Fence: fence, Lock: lock,
			RunFields: map[string]string{records.FieldStatus: status},
			Nodes:     map[string][]byte{"A": []byte(`{"s":"` + status + `","a":1}`)}})
	}
	first := e.lock(t, "r1", "a-before")
	require.EqualValues(t, statestore.WriteApplied, write(first, "a-before", "running"))

	// Holder A takes the run again (fence first+1); a failover loses that
	// step: the new master has the fence at first and no lock.
	lost := e.lock(t, "r1", "a")
	require.NoError(t, e.rdb.Del(e.ctx, e.keys.Lock("r1")).Err())
	require.NoError(t, e.rdb.Decr(e.ctx, e.keys.Fence("r1")).Err())
	// Holder B acquires and gets A's fence again.
	got := e.acquire(t, lockReq("r1", "b", "", false))
	require.Equal(t, lost, got[0].Fence, "the failover handed the same fence out twice")

	before := e.snapshot(t, "r1")
	require.EqualValues(t, statestore.WriteStale, write(lost, "a", "failed"), "the holder the failover forgot is fenced off")
	require.Equal(t, before, e.snapshot(t, "r1"), "a refused write changed the run")
	require.EqualValues(t, statestore.WriteApplied, write(lost, "b", "succeeded"))
	require.Equal(t, "succeeded", e.rdb.HGet(e.ctx, e.keys.Run("r1"), records.FieldStatus).Val())

	// The lock expired and nobody took it: the fence is still B's, the write is refused.
	require.NoError(t, e.rdb.Del(e.ctx, e.keys.Lock("r1")).Err())
	require.EqualValues(t, statestore.WriteStale, write(lost, "b", "failed"))
	require.Equal(t, "succeeded", e.rdb.HGet(e.ctx, e.keys.Run("r1"), records.FieldStatus).Val())
}

// testWriteReplay: a write replayed with the same fence (go-redis re-sent
// it, or the orchestrator retried after a lost answer) leaves the run's
// hashes as one application did, and an ended attempt's claim stays
// deleted. The history list is a log, not state: a replay appends its
// lines again, which readers tolerate.
func testWriteReplay(t *testing.T, e env) {
	fence := e.lock(t, "r1", "v")
	create := statestore.RunWrite{Run: "r1", Fence: fence, Lock: "v", Create: true,
		RunFields: map[string]string{records.FieldStatus: "running"},
		Nodes:     map[string][]byte{"A": []byte(`{"s":"running","a":1}`)}}
	require.EqualValues(t, statestore.WriteApplied, e.write(t, create))
	ended := statestore.Attempt{Run: "r1", Node: "A", Attempt: 1}
	require.Equal(t, statestore.ClaimOK, e.claimOne(t, ended, "w1"))

	result := statestore.RunWrite{Run: "r1", Fence: fence, Lock: "v",
		RunFields: map[string]string{records.FieldStatus: "succeeded"},
		Nodes:     map[string][]byte{"A": []byte(`{"s":"succeeded","a":1}`)},
		Outputs:   map[string][]byte{"A": []byte(`{"n":1}`)},
		Ended:     []statestore.Attempt{ended}}
	require.EqualValues(t, statestore.WriteApplied, e.write(t, result))
	once := e.snapshot(t, "r1")
	require.EqualValues(t, statestore.WriteApplied, e.write(t, result), "a replay with the writer's fence applies")
	require.Equal(t, once, e.snapshot(t, "r1"), "a replay changed the run")
	require.Zero(t, e.rdb.Exists(e.ctx, e.keys.Claim("r1", "A", 0, 1)).Val())
	require.Equal(t, statestore.ClaimFinished, e.claimOne(t, ended, "w2"), "a finished node is not claimed again")
}
