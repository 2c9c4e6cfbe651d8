package statestore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/braidhq/braid/pkg/records"
	"github.com/redis/go-redis/v9"
)

// Gone is where PruneRun moves a run's hash while it deletes the rest of
// the run: the run reads as unknown from that moment, and a prune cut short
// (a crash, Redis unreachable) is finished by the next one, which finds the
// workflow name and the node records it needs beside this key.
func (k Keys) Gone(run string) string { return k.runKey(run, "gone") }

// PruneOutcome says what PruneRun did with a run.
type PruneOutcome int

const (
	// PruneKept: the run has not ended, or ended after the cutoff, or its
	// lock is held (an event of it is being handled); nothing was touched.
	PruneKept PruneOutcome = iota
	// Pruned: every key of the run and its index entries are deleted.
	Pruned
	// PruneDangling: the index entry named no run (a start that never
	// wrote, a pending run deleted by hand): the entry was removed.
	PruneDangling
)

// pruneMarkScript moves an ended run's hash aside (Gone) when it ended at
// or before the cutoff and nobody holds its lock, in one step, so that a
// run retried or handled at the same moment is never deleted.
//
//	KEYS[1] run hash  KEYS[2] gone  KEYS[3] lock
//	ARGV[1] cutoff (Unix ms)
//	returns 1 moved aside, 0 kept, -1 no run hash
var pruneMarkScript = redis.NewScript(`
local f = redis.call('HMGET', KEYS[1], 'status', 'finished')
if not f[1] then return -1 end
if f[1] ~= 'succeeded' and f[1] ~= 'failed' and f[1] ~= 'cancelled' then return 0 end
local fin = tonumber(f[2])
if not fin or fin <= 0 or fin > tonumber(ARGV[1]) then return 0 end
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('RENAME', KEYS[1], KEYS[2])
return 1
`)

// pruneDelBatch bounds the keys of one DEL while a run is deleted, so that
// a run of many instances never holds Redis for long in one command.
const pruneDelBatch = 500

// PruneCandidates returns up to n runs of an all-runs index shard created
// at or before cutoffMs (Unix ms; a run cannot end before it is created),
// oldest first, from the skip-th on. The runs a prune kept stay at the
// front of the shard, so a caller walks past them with skip.
func (k Keys) PruneCandidates(ctx context.Context, rdb redis.Cmdable, shard string, cutoffMs int64, skip, n int) ([]string, error) {
	ids, err := rdb.ZRangeByScore(ctx, shard, &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(cutoffMs, 10), Offset: int64(skip), Count: int64(n),
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("prune candidates of %s: %w", shard, err)
	}
	return ids, nil
}

// PruneRun deletes run when it ended (succeeded, failed or cancelled) at or
// before cutoffMs: its hash, node records, outputs, history, fence, the
// instance records, outputs and items of its fan-out nodes, the log lists,
// large outputs and claims of every attempt its records name, and its
// entries in the all-runs, workflow-runs and active-runs indexes. A run
// that has not ended, ended later, or whose lock is held is kept untouched.
//
// The run's hash is first moved aside in one script that checks all of
// that (so a retry at the same moment keeps the run), and moved back
// nowhere: from then on the run reads as unknown (404), and the rest is
// deleted in bounded DELs, the Gone key last. A prune cut short is finished
// by the next PruneRun of the same id (its index entry is still there).
// Every step is idempotent.
func (k Keys) PruneRun(ctx context.Context, rdb redis.Cmdable, run string, cutoffMs int64) (PruneOutcome, error) {
	n, err := pruneMarkScript.Run(ctx, rdb, []string{k.Run(run), k.Gone(run), k.Lock(run)}, cutoffMs).Int()
	if err != nil {
		return PruneKept, fmt.Errorf("prune run %s: %w", run, err)
	}
	if n == 0 {
		return PruneKept, nil
	} // n == -1: no run hash — a prune cut short, or an index entry of no run
	pipe := rdb.Pipeline()
	fields := pipe.HMGet(ctx, k.Gone(run), records.FieldWorkflow)
	nodes := pipe.HGetAll(ctx, k.Nodes(run))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return PruneKept, fmt.Errorf("prune run %s: read its records: %w", run, err)
	}
	wf, _ := fields.Val()[0].(string)
	if wf == "" && n == -1 {
		// Neither the run nor a prune of it in progress: the index entry
		// names nothing (its records, if any, cannot be found without it).
		if err := rdb.ZRem(ctx, k.AllRunsOf(run), run).Err(); err != nil {
			return PruneKept, fmt.Errorf("prune run %s: unindex: %w", run, err)
		}
		return PruneDangling, nil
	}
	keys := k.runKeys(run, nodes.Val())
	for len(keys) > 0 {
		b := keys[:min(len(keys), pruneDelBatch)]
		keys = keys[len(b):]
		if err := rdb.Del(ctx, b...).Err(); err != nil {
			return PruneKept, fmt.Errorf("prune run %s: delete its keys: %w", run, err)
		}
	}
	pipe = rdb.Pipeline()
	pipe.ZRem(ctx, k.ActiveRunsOf(run), run)
	pipe.ZRem(ctx, k.BusyRunsOf(run), run)
	if wf != "" {
		pipe.ZRem(ctx, k.WorkflowRunsOf(wf, run), run)
	}
	pipe.Del(ctx, k.Nodes(run), k.Gone(run))
	pipe.ZRem(ctx, k.AllRunsOf(run), run) // last: while it is there, a prune cut short is found again
	if _, err := pipe.Exec(ctx); err != nil {
		return PruneKept, fmt.Errorf("prune run %s: unindex: %w", run, err)
	}
	return Pruned, nil
}

// runKeys names every key of run but its node records and Gone, from the
// node records (node id → records.NodeRecord JSON): attempts are numbered
// 1 up to a record's Attempt (a fan-out node's instances up to its
// InstanceHigh), and a fan-out node's instances 0 up to the most it started.
// A key named that was never written costs the DEL nothing.
func (k Keys) runKeys(run string, nodes map[string]string) []string {
	keys := []string{k.Run(run), k.Outputs(run), k.History(run), k.Fence(run), k.Lock(run)}
	perAttempt := func(node string, inst, attempts int) {
		for a := 1; a <= attempts; a++ {
			keys = append(keys, k.Logs(run, node, inst, a), k.Blob(run, node, inst, a), k.Claim(run, node, inst, a))
		}
	}
	for node, raw := range nodes {
		rec, err := records.DecodeNodeRecordString(raw)
		if err != nil {
			// An unreadable record names no attempts; its node's fixed keys
			// still go.
			keys = append(keys, k.Instances(run, node), k.InstanceOutputs(run, node), k.Items(run, node))
			continue
		}
		perAttempt(node, 0, rec.Attempt)
		if rec.FanOut || rec.Count > 0 || rec.InstanceHigh > 0 {
			keys = append(keys, k.Instances(run, node), k.InstanceOutputs(run, node), k.Items(run, node))
			for i := range max(rec.Count, rec.Next) {
				perAttempt(node, i, max(rec.InstanceHigh, 1))
			}
		}
	}
	return keys
}
