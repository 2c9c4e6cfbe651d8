package orchsvc

import (
	"context"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// TestBusyIndexFollowsTheRun: a run is among the busy runs from its first
// dispatch while a worker may hold one of its attempts or it waits for a
// concurrency slot; it leaves when a reconcile finds it waiting on nothing
// a worker holds (an approval), comes back with its next dispatch, and
// leaves with its end — as the active index does.
func TestBusyIndexFollowsTheRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, keys, cfg := workflowEnv(t, "wf", `{"name":"wf","concurrency":1,"nodes":[
	  {"id":"a","handler":"noop"},{"id":"gate","handler":"approval","depends_on":["a"]},{"id":"b","handler":"noop","depends_on":["gate"]}]}`)
	s, err := New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.close(ctx) })
	batch := func(run string, m proto.Message, topic string) {
		t.Helper()
		msg, err := eventbus.NewMessage(topic, run, m)
		require.NoError(t, err)
		require.NoError(t, s.tryBatch(ctx, []eventbus.Message{msg}))
	}
	start := func(run string) {
		t.Helper()
		p := statestore.PendingRun{ID: run, Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.Now()}
		_, err := keys.CreatePendingRun(ctx, rdb, p)
		require.NoError(t, err)
		batch(run, p.StartRequest(), eventsv1.TopicWorkflowStart)
	}
	control := func(run string, action eventsv1.ControlAction, node string) {
		t.Helper()
		batch(run, &eventsv1.RunControl{RunId: run, Action: action, NodeId: node, RequestedAtMs: time.Now().UnixMilli()}, eventsv1.TopicWorkflowControl)
	}
	succeeded := func(run, node string) {
		t.Helper()
		now := time.Now().UnixMilli()
		batch(run, &eventsv1.TaskResult{RunId: run, NodeId: node, Attempt: 1, WorkerId: "w",
			Status: eventsv1.TaskStatus_TASK_STATUS_SUCCEEDED, StartedAtMs: now, FinishedAtMs: now}, eventsv1.TopicTaskComplete)
	}
	busy := func() []string { return rdb.ZRange(ctx, keys.BusyRunShards()[0], 0, -1).Val() }
	active := func() []string { return rdb.ZRange(ctx, keys.ActiveRunShards()[0], 0, -1).Val() }

	start("r1")
	require.Equal(t, []string{"r1"}, busy(), "a run whose first attempt is queued")
	start("r2")
	require.ElementsMatch(t, []string{"r1", "r2"}, busy(), "a run held for a concurrency slot")

	succeeded("r1", "a") // r1 now waits on its approval alone
	require.Contains(t, busy(), "r1", "a run leaves the busy runs only when a reconcile finds it idle")
	control("r1", eventsv1.ControlAction_CONTROL_ACTION_RECONCILE, "")
	require.Equal(t, []string{"r2"}, busy(), "a run waiting on an approval stayed among the busy runs")
	require.ElementsMatch(t, []string{"r1", "r2"}, active())
	control("r2", eventsv1.ControlAction_CONTROL_ACTION_RECONCILE, "")
	require.Equal(t, []string{"r2"}, busy(), "a reconcile dropped a run held for a slot")

	control("r1", eventsv1.ControlAction_CONTROL_ACTION_APPROVE, "gate") // b is dispatched
	require.ElementsMatch(t, []string{"r1", "r2"}, busy())
	control("r1", eventsv1.ControlAction_CONTROL_ACTION_RECONCILE, "")
	require.ElementsMatch(t, []string{"r1", "r2"}, busy(), "a reconcile dropped a run with an attempt in flight")

	succeeded("r1", "b")
	require.Equal(t, "succeeded", rdb.HGet(ctx, keys.Run("r1"), "status").Val())
	require.Equal(t, []string{"r2"}, busy(), "a run that ended stayed among the busy runs")
	require.Equal(t, []string{"r2"}, active())

	// braid_runs counts each index (the maintenance leader's, every
	// ReconcileEvery).
	require.NoError(t, s.countRuns(ctx))
	for set, want := range map[string]float64{"stored": 2, "active": 1, "busy": 1} {
		require.Equal(t, want, testutil.ToFloat64(s.metrics.indexed.WithLabelValues(set)), "braid_runs{set=%q}", set)
	}
	s.metrics.leading(dutyMaintenance, false)
	require.Zero(t, testutil.CollectAndCount(s.metrics.indexed), "a former leader exports no run counts")
}
