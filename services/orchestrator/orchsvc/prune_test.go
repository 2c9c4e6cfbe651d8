package orchsvc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestPruneStepDeletesRunsPastTheRetention: the maintenance leader's
// prune walks the all-runs index oldest first past the runs it keeps —
// 150 old runs still active and 30 that ended within the retention, in
// front of and among 250 that ended before it (more than a page each) —
// deletes exactly the 250, counts them, and leaves the rest as they were;
// a round ends when the index has no more candidates and the next waits.
func TestPruneStepDeletesRunsPastTheRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, _, cfg := workflowEnv(t, "wf", `{"name":"wf","nodes":[{"id":"a","handler":"noop"}]}`)
	cfg.RunRetention = time.Hour
	s, err := New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.close(ctx) })
	now := time.Now()
	old := now.Add(-3 * time.Hour).UnixMilli()
	put := func(run, status string, created, finished int64) {
		pipe := rdb.Pipeline()
		pipe.HSet(ctx, s.keys.Run(run), records.FieldWorkflow, "wf", records.FieldStatus, status,
			records.FieldCreated, created, records.FieldFinished, finished)
		pipe.HSet(ctx, s.keys.Nodes(run), "a", records.NodeRecord{State: records.NodeSucceeded, Attempt: 1}.Encode())
		pipe.RPush(ctx, s.keys.Logs(run, "a", 0, 1), "line")
		pipe.ZAdd(ctx, s.keys.AllRunsOf(run), redis.Z{Score: float64(created), Member: run})
		pipe.ZAdd(ctx, s.keys.WorkflowRunsOf("wf", run), redis.Z{Score: float64(created), Member: run})
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	var gone, kept []string
	for i := range 150 { // the oldest: still running
		put(fmt.Sprintf("active-%03d", i), "running", old+int64(i), 0)
		kept = append(kept, fmt.Sprintf("active-%03d", i))
	}
	for i := range 250 {
		run := fmt.Sprintf("ended-%03d", i)
		put(run, "succeeded", old+1000+int64(i), now.Add(-2*time.Hour).UnixMilli())
		gone = append(gone, run)
		if i%10 == 0 { // created as long ago, ended within the hour
			run = fmt.Sprintf("recent-%03d", i)
			put(run, "failed", old+1000+int64(i), now.Add(-30*time.Minute).UnixMilli())
			kept = append(kept, run)
		}
	}
	put("new", "succeeded", now.UnixMilli(), now.UnixMilli())
	kept = append(kept, "new")
	// A run hash of the wrong type among the oldest: its prune fails, the
	// others' do not wait for it.
	require.NoError(t, rdb.Set(ctx, s.keys.Run("poison"), "x", 0).Err())
	require.NoError(t, rdb.ZAdd(ctx, s.keys.AllRunsOf("poison"), redis.Z{Score: float64(old + 500), Member: "poison"}).Err())

	p := newPruner(s.keys.AllRunShards())
	var errs []error
	for step := 0; step < 200 && (step == 0 || p.shard < len(p.shards)); step++ {
		if err := s.pruneStep(ctx, p, now); err != nil {
			errs = append(errs, err)
		}
	}
	require.Len(t, errs, 1, "%v", errs)
	require.ErrorContains(t, errs[0], "prune run poison")
	require.Equal(t, len(p.shards), p.shard, "the round ended")
	require.EqualValues(t, 250, s.RunsPruned.Load())
	for _, run := range gone {
		require.Zero(t, rdb.Exists(ctx, s.keys.Run(run), s.keys.Nodes(run), s.keys.Logs(run, "a", 0, 1)).Val(), run)
		require.ErrorIs(t, rdb.ZScore(ctx, s.keys.AllRunsOf(run), run).Err(), redis.Nil, run)
		require.ErrorIs(t, rdb.ZScore(ctx, s.keys.WorkflowRunsOf("wf", run), run).Err(), redis.Nil, run)
	}
	for _, run := range kept {
		require.EqualValues(t, 3, rdb.Exists(ctx, s.keys.Run(run), s.keys.Nodes(run), s.keys.Logs(run, "a", 0, 1)).Val(), run)
		require.NoError(t, rdb.ZScore(ctx, s.keys.AllRunsOf(run), run).Err(), run)
	}

	// The next round waits; then it finds nothing more to delete.
	put("ended-late", "succeeded", old, now.Add(-2*time.Hour).UnixMilli())
	require.NoError(t, s.pruneStep(ctx, p, now.Add(time.Second)))
	require.EqualValues(t, 1, rdb.Exists(ctx, s.keys.Run("ended-late")).Val(), "a round began before its time")
	if err := s.pruneStep(ctx, p, now.Add(2*time.Minute)); err != nil { // the oldest first: ended-late, then poison again
		require.ErrorContains(t, err, "prune run poison")
	}
	require.Zero(t, rdb.Exists(ctx, s.keys.Run("ended-late")).Val())
	require.EqualValues(t, 251, s.RunsPruned.Load())

	s.cfg.RunRetention = -1 // kept for ever
	put("ended-again", "succeeded", old, now.Add(-2*time.Hour).UnixMilli())
	require.NoError(t, s.pruneStep(ctx, p, now.Add(time.Hour)))
	require.EqualValues(t, 1, rdb.Exists(ctx, s.keys.Run("ended-again")).Val())
}
