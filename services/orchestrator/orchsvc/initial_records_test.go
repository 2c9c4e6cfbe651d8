package orchsvc

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// TestStartWritesOnlyTheRecordsItChanged: a run's first write stores the
// records its start changed (the root queued), not a pending record per
// node; each node's record is written when it first changes. An owner
// that loads the run reads a missing record as the node's initial one
// (pending, every parent left), so the run goes on to the end across a
// change of owner after every step.
func TestStartWritesOnlyTheRecordsItChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, keys, cfg := workflowEnv(t, "wf", `{"name":"wf","nodes":[{"id":"a","handler":"noop"},{"id":"b","handler":"noop","depends_on":["a"]},
	  {"id":"c","handler":"noop","depends_on":["a"]},{"id":"d","handler":"noop","depends_on":["b","c"]}]}`)
	owner, step := freshOwners(t, ctx, cfg)
	stored := func() map[string]records.NodeRecord {
		out := map[string]records.NodeRecord{}
		for id, raw := range rdb.HGetAll(ctx, keys.Nodes("r1")).Val() {
			rec, err := records.DecodeNodeRecord([]byte(raw))
			require.NoError(t, err)
			out[id] = rec
		}
		return out
	}
	ids := func(m map[string]records.NodeRecord) []string {
		return slices.Sorted(maps.Keys(m))
	}

	p := statestore.PendingRun{ID: "r1", Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.Now()}
	_, err := keys.CreatePendingRun(ctx, rdb, p)
	require.NoError(t, err)
	step(runMessage(t, eventsv1.TopicWorkflowStart, p.StartRequest()))
	recs := stored()
	require.Equal(t, []string{"a"}, ids(recs), "the start stores the root it queued, and no pending record")
	require.Equal(t, records.NodeQueued, recs["a"].State)

	// A fresh owner restores b, c and d as pending with their parents left.
	st, err := keys.LoadRun(ctx, rdb, "r1")
	require.NoError(t, err)
	r, err := owner().restore(ctx, "r1", st)
	require.NoError(t, err)
	for i, want := range map[string]int{"b": 1, "c": 1, "d": 2} {
		n := r.Nodes[r.Index(i)]
		require.Equal(t, records.NodeRecord{State: records.NodePending, ParentsLeft: want}, n, "node %s", i)
	}

	done := func(node string) eventbus.Message { return succeededResult(t, node, []byte(`{}`)) }
	step(done("a"))
	recs = stored()
	require.Equal(t, []string{"a", "b", "c"}, ids(recs), "a's end changed its children only")
	require.Equal(t, records.NodeQueued, recs["b"].State)
	step(done("b"))
	recs = stored()
	require.Equal(t, records.NodeRecord{State: records.NodePending, ParentsLeft: 1}, recs["d"], "b's end left d one parent")
	for _, node := range []string{"c", "d"} {
		step(done(node))
	}
	recs = stored()
	for _, node := range []string{"a", "b", "c", "d"} {
		require.Equal(t, records.NodeSucceeded, recs[node].State, node)
	}
	require.Equal(t, string(records.RunSucceeded), rdb.HGet(ctx, keys.Run("r1"), records.FieldStatus).Val())
}

// freshOwners returns a maker of fresh owners (nothing cached: each loads
// the run from Redis) and step, which handles one batch on a fresh owner
// that then stops (its locks released).
func freshOwners(t *testing.T, ctx context.Context, cfg Config) (owner func() *Service, step func(eventbus.Message)) {
	owner = func() *Service {
		s, err := New(ctx, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { s.close(ctx) })
		return s
	}
	step = func(m eventbus.Message) {
		s := owner()
		require.NoError(t, s.tryBatch(ctx, []eventbus.Message{m}))
		s.close(ctx)
	}
	return owner, step
}

// runMessage is m on topic, keyed by run r1.
func runMessage(t *testing.T, topic string, m proto.Message) eventbus.Message {
	t.Helper()
	out, err := eventbus.NewMessage(topic, "r1", m)
	require.NoError(t, err)
	return out
}

// succeededResult is the result of r1's node, attempt 1, succeeded with output.
func succeededResult(t *testing.T, node string, output []byte) eventbus.Message {
	now := time.Now().UnixMilli()
	return runMessage(t, eventsv1.TopicTaskComplete, &eventsv1.TaskResult{RunId: "r1", NodeId: node, Attempt: 1,
		Status: eventsv1.TaskStatus_TASK_STATUS_SUCCEEDED, Output: output, StartedAtMs: now, FinishedAtMs: now})
}
