package orchsvc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/records"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// TestReconcileResendsOnlyOfferedHandlers: an orchestrator taking a run
// over re-sends at once the dispatches nobody claimed — but not one whose
// handler no live worker offers (the worker registry: none here, then a
// stale entry), which would only add a history line a pass; once a live
// worker offers it, the next takeover re-sends it.
func TestReconcileResendsOnlyOfferedHandlers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, keys, cfg := workflowEnv(t, "wf", `{"name":"wf","nodes":[{"id":"a","handler":"resize"}]}`)
	startAndLeave(t, rdb, keys, cfg, "r1")

	resends := func() int {
		return strings.Count(strings.Join(rdb.LRange(ctx, keys.History("r1"), 0, -1).Val(), "\n"), "re-dispatched unclaimed node a")
	}
	register := func(handler string, seen time.Time) {
		b, err := json.Marshal(records.WorkerStatus{ID: "w1", Handlers: []string{handler}, HeartbeatIntervalMs: 1000, SeenAt: seen})
		require.NoError(t, err)
		require.NoError(t, rdb.HSet(ctx, keys.Workers(), "w1", b).Err())
	}
	takeOver := func(id string) {
		t.Helper()
		c := cfg
		c.ID = id
		s, err := New(ctx, c)
		require.NoError(t, err)
		defer s.close(ctx)
		m, err := eventbus.NewMessage(eventsv1.TopicWorkflowControl, "r1", &eventsv1.RunControl{
			RunId: "r1", Action: eventsv1.ControlAction_CONTROL_ACTION_RECONCILE, RequestedAtMs: time.Now().UnixMilli()})
		require.NoError(t, err)
		require.NoError(t, s.tryBatch(ctx, []eventbus.Message{m}))
	}

	takeOver("orch-b") // no worker at all
	require.Zero(t, resends(), "re-sent a dispatch of a handler nobody offers")
	register("resize", time.Now().Add(-time.Minute)) // a dead worker's entry
	takeOver("orch-c")
	require.Zero(t, resends(), "a stale registry entry counted as a live worker")
	register("noop", time.Now()) // live, but another handler
	takeOver("orch-d")
	require.Zero(t, resends())
	register("resize", time.Now())
	takeOver("orch-e")
	require.Equal(t, 1, resends(), "the handler is offered now: the takeover re-sends its dispatch")
}
