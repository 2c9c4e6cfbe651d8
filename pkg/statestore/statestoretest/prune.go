package statestoretest

import (
	"testing"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// runKeysLeft lists the keys of run left on the server (every master of a
// cluster: a run's keys share its slot, but the scan must not assume it).
func (e env) runKeysLeft(t *testing.T, run string) []string {
	t.Helper()
	left, err := statestore.ScanKeys(e.ctx, e.rdb, e.keys.RunPattern(run))
	require.NoError(t, err)
	return left
}

// endedRun writes a run as the engine leaves it: its hash (ended at
// finished, Unix ms), node records of a plain node on its second attempt
// and of a fan-out node of three instances, two of them on their second
// attempt, outputs, history, fence, logs, a large output and a claim left
// behind, the fan-out node's instance records, outputs and items, and its
// index entries (created at 1,000 ms).
func (e env) endedRun(t *testing.T, run, status string, finished int64) {
	t.Helper()
	k, ctx := e.keys, e.ctx
	fan := records.NodeRecord{State: records.NodeSucceeded, FanOutCounts: records.FanOutCounts{FanOut: true, Count: 3, Next: 3, Succeeded: 3, InstanceHigh: 2}}
	pipe := e.rdb.Pipeline()
	pipe.HSet(ctx, k.Run(run), records.FieldWorkflow, "wf", records.FieldStatus, status, records.FieldCreated, 1000, records.FieldFinished, finished)
	pipe.HSet(ctx, k.Nodes(run), "a", records.NodeRecord{State: records.NodeSucceeded, Attempt: 2}.Encode(), "f", fan.Encode())
	pipe.HSet(ctx, k.Outputs(run), "a", `{"x":1}`)
	pipe.RPush(ctx, k.History(run), "attempt 1 failed")
	pipe.Set(ctx, k.Fence(run), 3, 0)
	pipe.RPush(ctx, k.Logs(run, "a", 0, 1), "line")
	pipe.RPush(ctx, k.Logs(run, "a", 0, 2), "line")
	pipe.Set(ctx, k.Blob(run, "a", 0, 2), "big", 0)
	pipe.Set(ctx, k.Claim(run, "a", 0, 1), "w", 0)
	pipe.RPush(ctx, k.Logs(run, "f", 2, 2), "line")
	pipe.HSet(ctx, k.Instances(run, "f"), "0", "{}", "1", "{}", "2", "{}")
	pipe.HSet(ctx, k.InstanceOutputs(run, "f"), "0", "1")
	pipe.RPush(ctx, k.Items(run, "f"), "1", "2", "3")
	pipe.ZAdd(ctx, k.AllRunsOf(run), redis.Z{Score: 1000, Member: run})
	pipe.ZAdd(ctx, k.WorkflowRunsOf("wf", run), redis.Z{Score: 1000, Member: run})
	pipe.ZAdd(ctx, k.ActiveRunsOf(run), redis.Z{Score: 1000, Member: run}) // as a crash can leave it
	pipe.ZAdd(ctx, k.BusyRunsOf(run), redis.Z{Score: 1000, Member: run})
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
}

func (e env) indexed(t *testing.T, run string) []bool {
	t.Helper()
	var in []bool
	for _, key := range []string{e.keys.AllRunsOf(run), e.keys.WorkflowRunsOf("wf", run), e.keys.ActiveRunsOf(run), e.keys.BusyRunsOf(run)} {
		err := e.rdb.ZScore(e.ctx, key, run).Err()
		if err != nil {
			require.ErrorIs(t, err, redis.Nil)
		}
		in = append(in, err == nil)
	}
	return in
}

// testPrune: PruneRun deletes every key of a run that ended at or before
// the cutoff, and its index entries, and touches nothing of a run that has
// not ended, ended later, or is locked; a prune cut short is finished by
// the next; an index entry of no run is removed; PruneCandidates walks the
// oldest first up to the cutoff.
func testPrune(t *testing.T, e env) {
	k, ctx := e.keys, e.ctx
	prune := func(run string, cutoff int64) statestore.PruneOutcome {
		t.Helper()
		out, err := k.PruneRun(ctx, e.rdb, run, cutoff)
		require.NoError(t, err)
		return out
	}
	all := func(run string) int { return len(e.runKeysLeft(t, run)) }

	e.endedRun(t, "done", "succeeded", 5000)
	e.endedRun(t, "live", "running", 0)
	e.endedRun(t, "late", "failed", 9000)
	e.endedRun(t, "busy", "cancelled", 5000)
	require.NoError(t, e.rdb.Set(ctx, k.Lock("busy"), "holder", 0).Err())
	before := map[string]int{}
	for _, r := range []string{"done", "live", "late", "busy"} {
		before[r] = all(r)
	}
	require.Equal(t, 13, before["done"], "the fixture writes every kind of key of a run")

	ids, err := k.PruneCandidates(ctx, e.rdb, k.AllRunsOf("done"), 1000, 0, 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"done", "live", "late", "busy"}, ids, "created at the cutoff: candidates")
	ids, err = k.PruneCandidates(ctx, e.rdb, k.AllRunsOf("done"), 999, 0, 10)
	require.NoError(t, err)
	require.Empty(t, ids, "created after the cutoff")

	require.Equal(t, statestore.PruneKept, prune("live", 8000), "a run that has not ended is kept")
	require.Equal(t, statestore.PruneKept, prune("late", 8000), "a run that ended after the cutoff is kept")
	require.Equal(t, statestore.PruneKept, prune("busy", 8000), "a locked run is kept")
	for _, r := range []string{"live", "late", "busy"} {
		require.Equal(t, before[r], all(r), "%s: nothing of a kept run goes", r)
		require.Equal(t, []bool{true, true, true, true}, e.indexed(t, r), r)
	}

	require.Equal(t, statestore.Pruned, prune("done", 5000), "ended at the cutoff")
	require.Empty(t, e.runKeysLeft(t, "done"), "every key of the run is gone")
	require.Equal(t, []bool{false, false, false, false}, e.indexed(t, "done"))
	for _, r := range []string{"live", "late", "busy"} {
		require.Equal(t, before[r], all(r), "%s: the other runs' keys stay", r)
	}

	// Cut short after the run was moved aside: the next prune finishes it.
	e.endedRun(t, "cut", "succeeded", 5000)
	require.NoError(t, e.rdb.Rename(ctx, k.Run("cut"), k.Gone("cut")).Err())
	require.Equal(t, statestore.Pruned, prune("cut", 5000))
	require.Empty(t, e.runKeysLeft(t, "cut"))
	require.Equal(t, []bool{false, false, false, false}, e.indexed(t, "cut"))

	// An index entry that names no run.
	require.NoError(t, e.rdb.ZAdd(ctx, k.AllRunsOf("ghost"), redis.Z{Score: 1000, Member: "ghost"}).Err())
	require.Equal(t, statestore.PruneDangling, prune("ghost", 5000))
	require.ErrorIs(t, e.rdb.ZScore(ctx, k.AllRunsOf("ghost"), "ghost").Err(), redis.Nil)
}
