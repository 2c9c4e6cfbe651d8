package statestore_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestEveryScriptKeepsToOneSlot runs every Lua script of the store, with
// every KEYS position filled, through a client whose SlotCheck hook fails
// the test when one call's keys span two Redis Cluster slots (a cluster
// would refuse it with CROSSSLOT; this single server would not), and
// fails it too when a script of ScriptNames never ran: a new script needs
// a call in exerciseScripts.
func TestEveryScriptKeepsToOneSlot(t *testing.T) {
	t.Parallel()
	rdb := testinfra.StartRedis(t).Client(t)
	check := slotChecked(t, rdb)
	exerciseScripts(t, rdb, statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"})
	requireEveryScriptChecked(t, check)
}

// TestScriptNamesListsEveryScript: every redis.NewScript of the package is
// in ScriptNames (the scripts map), so that requireEveryScriptChecked
// asks for it.
func TestScriptNamesListsEveryScript(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	made := 0
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			made += newScriptCalls(t, f)
		}
	}
	require.Positive(t, made)
	require.Len(t, statestore.ScriptNames(), made,
		"redis.NewScript is called %d times but ScriptNames has %d scripts: add the new one to scripts (scriptnames.go)",
		made, len(statestore.ScriptNames()))
}

// newScriptCalls counts the redis.NewScript calls in the Go file at path.
func newScriptCalls(t *testing.T, path string) int {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	require.NoError(t, err)
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		if call, ok := node.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewScript" {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "redis" {
					n++
				}
			}
		}
		return true
	})
	return n
}

// slotChecked adds a SlotCheck that names the store's scripts to rdb.
func slotChecked(t *testing.T, rdb redis.UniversalClient) *testinfra.SlotCheck {
	t.Helper()
	check := testinfra.NewSlotCheck(t)
	check.Names = statestore.ScriptNames()
	rdb.AddHook(check)
	return check
}

// requireEveryScriptChecked fails unless check saw every script of
// ScriptNames at least once.
func requireEveryScriptChecked(t *testing.T, check *testinfra.SlotCheck) {
	t.Helper()
	seen, names := check.Seen(), statestore.ScriptNames()
	for sha, name := range names {
		require.Positive(t, seen[sha], "script %q (%s) never ran through the slot check: call it in exerciseScripts", name, sha)
	}
	t.Logf("%d script calls of all %d scripts checked", check.Checked(), len(names))
}

// exerciseScripts calls, on rdb, every function of the store that runs a
// script, with every KEYS position of each script filled, and checks each
// answered without error (on a cluster, a cross-slot script would not).
func exerciseScripts(t *testing.T, rdb redis.UniversalClient, k statestore.Keys) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, statestore.LoadScripts(ctx, rdb))
	exerciseRunScripts(t, ctx, rdb, k)
	exerciseClaimScripts(t, ctx, rdb, k)
	exerciseWorkflowScripts(t, ctx, rdb, k)
	exerciseScheduleScripts(t, ctx, rdb, k)
	exercisePruneScript(t, ctx, rdb, k)
}

// exercisePruneScript prunes an ended run (prune_mark) with a log list, a
// fan-out node's instances and its index entries.
func exercisePruneScript(t *testing.T, ctx context.Context, rdb redis.UniversalClient, k statestore.Keys) {
	t.Helper()
	fan := records.NodeRecord{State: records.NodeSucceeded, FanOutCounts: records.FanOutCounts{FanOut: true, Count: 2, Next: 2, InstanceHigh: 1}}
	require.NoError(t, rdb.HSet(ctx, k.Run("rp"), records.FieldWorkflow, "wf", records.FieldStatus, "succeeded", records.FieldFinished, 10).Err())
	require.NoError(t, rdb.HSet(ctx, k.Nodes("rp"), "a", records.NodeRecord{State: records.NodeSucceeded, Attempt: 1}.Encode(), "f", fan.Encode()).Err())
	require.NoError(t, rdb.RPush(ctx, k.Logs("rp", "f", 1, 1), "line").Err())
	require.NoError(t, rdb.ZAdd(ctx, k.AllRunsOf("rp"), redis.Z{Score: 1, Member: "rp"}).Err())
	require.NoError(t, rdb.ZAdd(ctx, k.WorkflowRunsOf("wf", "rp"), redis.Z{Score: 1, Member: "rp"}).Err())
	out, err := k.PruneRun(ctx, rdb, "rp", 10)
	require.NoError(t, err)
	require.Equal(t, statestore.Pruned, out)
	require.Zero(t, rdb.Exists(ctx, k.Logs("rp", "f", 1, 1), k.Nodes("rp"), k.Gone("rp")).Val())
}

// fullWrite is a first write of run that fills every KEYS position of the
// apply and start scripts: two fan-out nodes, two ended attempts and two
// orphaned claims.
func fullWrite(run string, fence int64, lock string) statestore.RunWrite {
	att := func(node string, inst int) statestore.Attempt {
		return statestore.Attempt{Run: run, Node: node, Instance: inst, Attempt: 1}
	}
	rec := []byte(`{"s":"running","a":1}`)
	return statestore.RunWrite{Run: run, Fence: fence, Lock: lock, Create: true,
		RunFields: map[string]string{records.FieldStatus: "running"},
		Nodes:     map[string][]byte{"A": rec}, Outputs: map[string][]byte{"A": []byte(`1`)},
		ClearOutputs: []string{"Z"}, History: []string{"started"},
		FanOuts: []statestore.FanOutWrite{
			{Node: "F", Instances: map[int][]byte{0: rec}, Outputs: map[int][]byte{0: []byte(`1`)}, Items: [][]byte{[]byte(`1`)}},
			{Node: "G", Reset: true, Instances: map[int][]byte{0: rec}},
		},
		Ended:   []statestore.Attempt{att("B", 0), att("F", 1)},
		Orphans: []statestore.OrphanedClaim{{Attempt: att("C", 0), Holder: "i1/w1"}, {Attempt: att("G", 0), Holder: "i1/w1"}},
	}
}

// exerciseRunScripts runs apply, start, ended, acquire, refresh, release
// (of locks) and drop_holder.
func exerciseRunScripts(t *testing.T, ctx context.Context, rdb redis.UniversalClient, k statestore.Keys) {
	t.Helper()
	fence, lock := lockRun(t, ctx, rdb, k, "r1")
	pipe := rdb.Pipeline()
	write := k.QueueWrite(ctx, pipe, fullWrite("r1", fence, lock))
	start := k.QueueStart(ctx, pipe, fullWrite("r2", 0, ""), statestore.LockRequest{HeldLock: statestore.HeldLock{Run: "r2", Value: "v2"}}, time.Minute)
	k.QueueEnded(ctx, pipe, "r1", false)
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	require.EqualValues(t, statestore.WriteApplied, write.Val())
	outcome, _, err := start.Result()
	require.NoError(t, err)
	require.Equal(t, statestore.StartApplied, outcome)

	req := func(run string, light bool) statestore.LockRequest {
		return statestore.LockRequest{HeldLock: statestore.HeldLock{Run: run, Value: "v-" + run}, TakeOver: "me", Light: light}
	}
	got, err := k.AcquireRuns(ctx, rdb, []statestore.LockRequest{req("r1", false), req("r3", true)}, time.Minute)
	require.NoError(t, err)
	require.Positive(t, got[0].Fence)
	held := []statestore.HeldLock{req("r1", false).HeldLock, req("r3", true).HeldLock}
	lost, err := k.RefreshLocks(ctx, rdb, held, time.Minute)
	require.NoError(t, err)
	require.Empty(t, lost)
	require.NoError(t, k.ReleaseLocks(ctx, rdb, held))
	_, err = statestore.DropLockOf(ctx, rdb, k.Leader("maintenance"), "me")
	require.NoError(t, err)
}

// exerciseClaimScripts runs claim (alone and batched), claims, heartbeat and
// release (of a claim) on a fan-out instance, which fills the instances key.
func exerciseClaimScripts(t *testing.T, ctx context.Context, rdb redis.UniversalClient, k statestore.Keys) {
	t.Helper()
	a := statestore.Attempt{Run: "r1", Node: "F", Instance: 0, Attempt: 1}
	require.NoError(t, rdb.HSet(ctx, k.Nodes("r1"), "F", `{"s":"running","fo":true}`).Err())
	res, err := k.ClaimAttempt(ctx, rdb, a, "w1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimOK, res)
	batch, err := k.ClaimAttempts(ctx, rdb, []statestore.ClaimRequest{{Attempt: a, TTL: time.Minute}}, "w1")
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimMine, batch[0].Result)
	other := a
	other.Instance = 1
	batch, err = k.ClaimAttempts(ctx, rdb, []statestore.ClaimRequest{{Attempt: a, TTL: time.Minute}, {Attempt: other, TTL: time.Minute}}, "w1")
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimMine, batch[0].Result, "two attempts of one run are claimed in one call (claims)")
	res, err = k.Heartbeat(ctx, rdb, a, "w1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimOK, res)
	require.NoError(t, k.ReleaseClaim(ctx, rdb, a, "w1"))
}

// exerciseWorkflowScripts runs register, reserve, release (of an
// idempotency key), create_pending, delete_pending, page and the three
// admission scripts.
func exerciseWorkflowScripts(t *testing.T, ctx context.Context, rdb redis.UniversalClient, k statestore.Keys) {
	t.Helper()
	now := time.UnixMilli(1_700_000_000_000)
	for range 2 {
		_, err := k.RegisterWorkflow(ctx, rdb, "wf", []byte(`{}`), now)
		require.NoError(t, err)
	}
	_, fresh, err := k.ReserveIdempotency(ctx, rdb, "wf", "key", "p1", time.Minute)
	require.NoError(t, err)
	require.True(t, fresh)
	require.NoError(t, k.ReleaseIdempotency(ctx, rdb, "wf", "key", "p1"))

	p := statestore.PendingRun{ID: "p1", Workflow: "wf", Version: 2, Input: []byte(`{}`), Created: now, Capped: true}
	created, _, err := k.CreatePendingRunOfLatest(ctx, rdb, p)
	require.NoError(t, err)
	require.True(t, created)
	p.ID, p.Version = "p2", 1 // not the latest: written, then undone by delete_pending
	_, _, err = k.CreatePendingRunOfLatest(ctx, rdb, p)
	require.ErrorIs(t, err, statestore.ErrNotLatest)
	require.NoError(t, k.DeletePendingRun(ctx, rdb, "p1", "wf"))
	page, err := statestore.PageSorted(ctx, rdb, k.WorkflowRunShards("wf")[0], &redis.Z{Score: 1, Member: "p0"}, 10, true)
	require.NoError(t, err)
	require.Empty(t, page)

	admitted, err := k.Admit(ctx, rdb, "wf", "a1", 1, 1)
	require.NoError(t, err)
	require.True(t, admitted)
	pipe := rdb.Pipeline()
	queued := k.QueueAdmit(ctx, pipe, "wf", "a2", 1, 2)
	_, err = pipe.Exec(ctx)
	require.NoError(t, err)
	admitted, err = statestore.AdmitOutcome(queued)
	require.NoError(t, err)
	require.False(t, admitted)
	_, err = k.Admissible(ctx, rdb, "wf", 1)
	require.NoError(t, err)
	next, err := k.Release(ctx, rdb, "wf", "a1", 1)
	require.NoError(t, err)
	require.Equal(t, []string{"a2"}, next)
}

// exerciseScheduleScripts runs put_schedule (create and update),
// advance_schedule and delete_schedule.
func exerciseScheduleScripts(t *testing.T, ctx context.Context, rdb redis.UniversalClient, k statestore.Keys) {
	t.Helper()
	due := time.UnixMilli(1_700_000_000_000)
	def := statestore.ScheduleDef{ID: "s1", Workflow: "wf", Cron: "@every 1m", Input: []byte(`{}`), Enabled: true, Overlap: "skip"}
	require.NoError(t, k.CreateSchedule(ctx, rdb, def, due))
	require.NoError(t, k.UpdateSchedule(ctx, rdb, def, statestore.KeepNext))
	ok, err := k.AdvanceSchedule(ctx, rdb, statestore.ScheduleAdvance{ID: "s1", Expected: due, Next: due.Add(time.Minute), Fired: due, Run: "p1"})
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, k.DeleteSchedule(ctx, rdb, "s1"))
}
