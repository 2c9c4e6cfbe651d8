package statestore_test

import (
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/stretchr/testify/require"
)

// startWrite is the first write of run: one queued node and a history line.
func startWrite(run string) statestore.RunWrite {
	return statestore.RunWrite{Run: run, Create: true,
		RunFields: map[string]string{records.FieldStatus: "running", records.FieldWorkflow: "wf"},
		Nodes:     map[string][]byte{"A": []byte(`{"s":"queued","a":1}`)},
		History:   []string{"started"}}
}

// start runs one optimistic start and returns its outcome and fence.
func (b bundle) start(t *testing.T, w statestore.RunWrite, value, prev string) (int, int64) {
	t.Helper()
	pipe := b.rdb.Pipeline()
	cmd := b.keys.QueueStart(b.ctx, pipe, w, lockReq(w.Run, value, prev, true), 5*time.Second)
	_, err := pipe.Exec(b.ctx)
	require.NoError(t, err)
	outcome, fence, err := cmd.Result()
	require.NoError(t, err)
	return outcome, fence
}

func TestQueueStartLocksFencesAndCreatesInOneStep(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The api's pending record and an earlier fence (a run whose lock was
	// taken and let go before its start arrived).
	require.NoError(t, b.rdb.HSet(b.ctx, b.keys.Run("r1"), records.FieldStatus, "pending", records.FieldInput, "{}").Err())
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Fence("r1"), 4, 0).Err())

	outcome, fence := b.start(t, startWrite("r1"), "v1", "")
	require.Equal(t, statestore.StartApplied, outcome)
	require.EqualValues(t, 5, fence, "the fence moves as when the lock is taken on the normal path")
	require.Equal(t, "5", b.rdb.Get(b.ctx, b.keys.Fence("r1")).Val())
	require.Equal(t, "v1", b.rdb.Get(b.ctx, b.keys.Lock("r1")).Val())
	ttl := b.rdb.PTTL(b.ctx, b.keys.Lock("r1")).Val()
	require.Greater(t, ttl, 3*time.Second)
	require.LessOrEqual(t, ttl, 5*time.Second)
	require.Equal(t, map[string]string{records.FieldStatus: "running", records.FieldWorkflow: "wf", records.FieldInput: "{}"},
		b.rdb.HGetAll(b.ctx, b.keys.Run("r1")).Val(), "the pending record is taken over, not replaced")
	require.Equal(t, `{"s":"queued","a":1}`, b.rdb.HGet(b.ctx, b.keys.Nodes("r1"), "A").Val())
	require.Equal(t, []string{"started"}, b.rdb.LRange(b.ctx, b.keys.History("r1"), 0, -1).Val())

	// The token it returned fences later writes like any other.
	w := statestore.RunWrite{Run: "r1", Fence: fence, Lock: "v1", Nodes: map[string][]byte{"A": []byte(`{"s":"succeeded","a":1}`)}}
	require.Equal(t, int64(statestore.WriteApplied), write(t, b, w))
	w.Fence = fence - 1
	require.Equal(t, int64(statestore.WriteStale), write(t, b, w), "an older holder is refused")
}

func TestQueueStartLeavesALockHeldElsewhere(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Lock("r1"), "theirs", time.Minute).Err())
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Fence("r1"), 7, 0).Err())

	outcome, fence := b.start(t, startWrite("r1"), "v1", "mine-before")
	require.Equal(t, statestore.StartLocked, outcome)
	require.Zero(t, fence)
	require.Equal(t, "theirs", b.rdb.Get(b.ctx, b.keys.Lock("r1")).Val())
	require.Equal(t, "7", b.rdb.Get(b.ctx, b.keys.Fence("r1")).Val(), "the fence moves only with the lock")
	require.Zero(t, b.rdb.Exists(b.ctx, b.keys.Nodes("r1"), b.keys.Run("r1"), b.keys.History("r1")).Val(), "nothing written")

	// A lock still holding the caller's previous value is its own: taken over.
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Lock("r1"), "mine-before", time.Minute).Err())
	outcome, fence = b.start(t, startWrite("r1"), "v1", "mine-before")
	require.Equal(t, statestore.StartApplied, outcome)
	require.EqualValues(t, 8, fence)
	require.Equal(t, "v1", b.rdb.Get(b.ctx, b.keys.Lock("r1")).Val())
}

func TestQueueStartNeverOverwritesAStartedRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	outcome, fence := b.start(t, startWrite("r1"), "v1", "")
	require.Equal(t, statestore.StartApplied, outcome)
	require.EqualValues(t, 1, fence)
	done := statestore.RunWrite{Run: "r1", Fence: fence, Lock: "v1", RunFields: map[string]string{records.FieldStatus: "succeeded"},
		Nodes: map[string][]byte{"A": []byte(`{"s":"succeeded","a":1}`)}}
	require.Equal(t, int64(statestore.WriteApplied), write(t, b, done))

	// A duplicated start (redelivered, or replayed by go-redis) from the
	// same holder, then from another one once the lock is gone.
	for i, value := range []string{"v1", "v2"} {
		if i == 1 {
			require.NoError(t, b.rdb.Del(b.ctx, b.keys.Lock("r1")).Err())
		}
		outcome, fence = b.start(t, startWrite("r1"), value, "")
		require.Equal(t, statestore.StartExists, outcome, value)
		require.EqualValues(t, 2+i, fence, "the lock is taken and fenced as on the normal path, so the caller can load the run")
		require.Equal(t, value, b.rdb.Get(b.ctx, b.keys.Lock("r1")).Val())
		require.Equal(t, "succeeded", b.rdb.HGet(b.ctx, b.keys.Run("r1"), records.FieldStatus).Val())
		require.Equal(t, `{"s":"succeeded","a":1}`, b.rdb.HGet(b.ctx, b.keys.Nodes("r1"), "A").Val())
		require.Equal(t, []string{"started"}, b.rdb.LRange(b.ctx, b.keys.History("r1"), 0, -1).Val(), "nothing appended")
	}
}
