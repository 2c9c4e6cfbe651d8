package orchsvc

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// TestNullOutputIsNotStored: a node that succeeds without an output (JSON
// null) leaves no field in the run's outputs hash, and an owner that loads
// the run afterwards reads its output as null, so a template that reads it
// resolves to null as it would have on the owner that saw it succeed (a
// missing output would fail the node). An output that is not null is
// stored as before.
func TestNullOutputIsNotStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, keys, cfg := workflowEnv(t, "wf", `{"name":"wf","nodes":[{"id":"a","handler":"noop"},{"id":"c","handler":"noop"},
	  {"id":"b","handler":"noop","depends_on":["a","c"],"config":{"from_a":"<< a >>","from_c":"<< c.n >>"}}]}`)
	owner, step := freshOwners(t, ctx, cfg)
	owner().close(ctx) // makes the topics
	cons, err := eventbus.NewConsumer(ctx, cfg.Bus, testinfra.UniqueName(t, "reader"), eventsv1.TopicTaskDispatch)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cons.Close() })

	p := statestore.PendingRun{ID: "r1", Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.Now()}
	_, err = keys.CreatePendingRun(ctx, rdb, p)
	require.NoError(t, err)
	step(runMessage(t, eventsv1.TopicWorkflowStart, p.StartRequest()))
	step(succeededResult(t, "a", nil)) // a task that returned nothing
	step(succeededResult(t, "c", []byte(`{"n":7}`)))

	outs := rdb.HGetAll(ctx, keys.Outputs("r1")).Val()
	require.Equal(t, map[string]string{"c": `{"n":7}`}, outs, "a's null output keeps no field; c's output is stored")

	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for range 10 { // a's and c's dispatches (each possibly twice: delivery is at least once), then b's
		msgs, err := cons.Fetch(fctx, 1)
		require.NoError(t, err, "b was not dispatched")
		d := &eventsv1.TaskDispatch{}
		require.NoError(t, eventbus.Decode(msgs[0], d))
		if d.GetNodeId() != "b" {
			continue
		}
		var config map[string]any
		require.NoError(t, json.Unmarshal(d.GetConfig(), &config))
		require.Equal(t, map[string]any{"from_a": nil, "from_c": float64(7)}, config,
			"b, dispatched by an owner that loaded a's end from Redis, reads a's output as null")
		return
	}
	t.Fatal("no dispatch of b among the first ten")
}
