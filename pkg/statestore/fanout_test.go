package statestore_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/stretchr/testify/require"
)

func TestFanOutWriteAndLoad(t *testing.T) {
	t.Parallel()
	b := setup(t)
	run := "r-fan"
	fence, lock := lockRun(t, b.ctx, b.rdb, b.keys, run)
	items := make([][]byte, 1234) // over the script's 500-argument chunks
	for i := range items {
		items[i] = []byte(strconv.Itoa(i))
	}
	write := func(w statestore.RunWrite) {
		t.Helper()
		w.Run, w.Fence, w.Lock = run, fence, lock
		pipe := b.rdb.Pipeline()
		cmd := b.keys.QueueWrite(b.ctx, pipe, w)
		_, err := pipe.Exec(b.ctx)
		require.NoError(t, err)
		require.EqualValues(t, statestore.WriteApplied, cmd.Val())
	}
	rec := records.NodeRecord{State: records.NodeQueued, Attempt: 1}
	write(statestore.RunWrite{
		Nodes: map[string][]byte{"f": records.NodeRecord{State: records.NodeRunning, FanOutCounts: records.FanOutCounts{FanOut: true, Count: 1234}}.Encode()},
		FanOuts: []statestore.FanOutWrite{{Node: "f", Items: items,
			Instances: map[int][]byte{0: rec.Encode(), 7: rec.Encode()}, Outputs: map[int][]byte{3: []byte(`{"x":3}`)}}},
	})
	st, err := b.keys.LoadFanOut(b.ctx, b.rdb, run, "f")
	require.NoError(t, err)
	require.Len(t, st.Items, 1234)
	require.Equal(t, "1233", st.Items[1233])
	require.Equal(t, map[int]string{0: string(rec.Encode()), 7: string(rec.Encode())}, st.Instances)
	require.Equal(t, map[int]string{3: `{"x":3}`}, st.Outputs)

	recs, outs, err := b.keys.InstancePage(b.ctx, b.rdb, run, "f", 2, 6)
	require.NoError(t, err)
	require.Equal(t, []string{"", "", "", "", "", string(rec.Encode())}, recs)
	require.Equal(t, `{"x":3}`, outs[1])

	// An instance attempt is claimed against the instance's own record.
	a := statestore.Attempt{Run: run, Node: "f", Instance: 7, Attempt: 1}
	got, err := b.keys.ClaimAttempt(b.ctx, b.rdb, a, "w1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimOK, got)
	got, err = b.keys.ClaimAttempt(b.ctx, b.rdb, statestore.Attempt{Run: run, Node: "f", Instance: 8, Attempt: 1}, "w1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimAhead, got, "an instance never started has no record: its dispatch is ahead of it")

	// A reset drops everything before the new writes.
	cancelled := records.NodeRecord{State: records.NodeCancelled, Attempt: 1}
	write(statestore.RunWrite{FanOuts: []statestore.FanOutWrite{{Node: "f", Reset: true, Instances: map[int][]byte{7: cancelled.Encode()}}}})
	st, err = b.keys.LoadFanOut(b.ctx, b.rdb, run, "f")
	require.NoError(t, err)
	require.Empty(t, st.Items)
	require.Empty(t, st.Outputs)
	require.Equal(t, map[int]string{7: string(cancelled.Encode())}, st.Instances)
	got, err = b.keys.Heartbeat(b.ctx, b.rdb, a, "w1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimFinished, got, "a cancelled instance tells its worker to stop")
}
