package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/records"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// TestFanInRaceDispatchesJoinOnce runs many runs whose 50 parents finish at
// the same moment, with two orchestrators and several workers, and counts
// the task.dispatch messages of the join: exactly one per run.
//
// Not parallel: it is the heaviest engine test and runs alone before the
// parallel ones, so their timeouts do not depend on sharing two cores with it.
func TestFanInRaceDispatchesJoinOnce(t *testing.T) {
	runs := 1000
	if testing.Short() {
		runs = 100
	}
	e := startEngine(t, engineOpts{orchestrators: 2, workers: 3, concurrency: 16})
	nodes := []dag.Node{{ID: "root", Handler: "noop"}}
	join := dag.Node{ID: "join", Handler: "noop"}
	for i := 0; i < 50; i++ {
		id := fmt.Sprintf("p%02d", i)
		nodes = append(nodes, dag.Node{ID: id, Handler: "noop", DependsOn: []string{"root"}})
		join.DependsOn = append(join.DependsOn, id)
	}
	def, err := json.Marshal(dag.Definition{Name: "fanin", Nodes: append(nodes, join)})
	require.NoError(t, err)
	name, v := e.register(def)

	counter, err := eventbus.NewConsumer(t.Context(), e.bus, "fanin-dispatch-counter", eventsv1.TopicTaskDispatch)
	require.NoError(t, err)
	t.Cleanup(func() { _ = counter.Close() })

	ids := make([]string, runs)
	for i := range ids {
		ids[i] = e.start(name, v, `{}`)
	}
	for _, id := range ids {
		st := e.wait(id, 3*time.Minute)
		require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus], st.Fields[records.FieldError])
	}
	joins := countDispatches(t, counter, ids, "join")
	require.Len(t, joins, runs)
	for _, id := range ids {
		// The fan-in decision dispatches the join once. The only other
		// source of a join dispatch is the reconciler re-sending an attempt
		// that went unclaimed for RedispatchAfter (a backlog on an
		// overloaded machine looks like a lost dispatch); each such repair
		// is in the run's history, so the count is still exact.
		hist, err := e.rdb.LRange(context.Background(), e.keys.History(id), 0, -1).Result()
		require.NoError(t, err)
		repairs := len(grep(hist, "reconciler: re-dispatched unclaimed node join "))
		require.Equal(t, 1+repairs, joins[id], "run %s: join dispatched %d times, %d by the reconciler", id, joins[id], repairs)
	}
}

// countDispatches reads task.dispatch until it has seen node's dispatch for
// every run in ids and returns, per run, how many were for node. It keeps
// reading briefly after the last one so that a late duplicate is counted.
func countDispatches(t *testing.T, c *eventbus.Consumer, ids []string, node string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	per := map[string]int{}
	read := func(fctx context.Context) error {
		msgs, err := c.Fetch(fctx, 1000)
		for _, m := range msgs {
			var d eventsv1.TaskDispatch
			require.NoError(t, eventbus.Decode(m, &d))
			if d.NodeId == node {
				per[d.RunId]++
			}
		}
		return err
	}
	for len(per) < len(ids) {
		require.NoError(t, read(ctx), "saw %s's dispatch for %d of %d runs", node, len(per), len(ids))
	}
	// Drain what is already there (bounded): duplicates produced with the
	// originals are on the topic by now.
	for range 50 {
		dctx, dcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := read(dctx)
		dcancel()
		if err != nil {
			break
		}
	}
	return per
}
