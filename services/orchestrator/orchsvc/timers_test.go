package orchsvc

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// TestEndedAttemptsDisarmTheirTimers: the write that takes an attempt out
// of flight also removes its durable deadline (a node or fan-out instance
// with a timeout) and a wait node's wake, and the write that ends the run
// removes the run's deadline, so the timer set holds only timers that
// still have work to do; before, each fired later as a TIMER control the
// owner loaded the run for only to ignore it.
func TestEndedAttemptsDisarmTheirTimers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, keys, cfg := workflowEnv(t, "wf", `{"name":"wf","timeout":"1h","nodes":[
	  {"id":"a","handler":"noop","timeout":"1h"},
	  {"id":"f","handler":"noop","depends_on":["a"],"parallel":2,"timeout":"1h"},
	  {"id":"w","handler":"wait","config":{"duration":"1h"},"depends_on":["a"]},
	  {"id":"z","handler":"noop","depends_on":["f"]}]}`)
	s, err := New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.close(ctx) })
	batch := func(topic string, m proto.Message) {
		t.Helper()
		msg, err := eventbus.NewMessage(topic, "r1", m)
		require.NoError(t, err)
		require.NoError(t, s.tryBatch(ctx, []eventbus.Message{msg}))
	}
	done := func(node string, inst int) {
		t.Helper()
		now := time.Now().UnixMilli()
		batch(eventsv1.TopicTaskComplete, &eventsv1.TaskResult{RunId: "r1", NodeId: node, Instance: int32(inst), Attempt: 1,
			Status: eventsv1.TaskStatus_TASK_STATUS_SUCCEEDED, Output: []byte(`{}`), StartedAtMs: now, FinishedAtMs: now})
	}
	timers := func() []string {
		t.Helper()
		var out []string
		for _, m := range rdb.ZRange(ctx, keys.TimersOf("r1"), 0, -1).Val() {
			tm, err := statestore.ParseTimer(m)
			require.NoError(t, err)
			out = append(out, eventsv1.TimerKind(tm.Kind).String()+" "+tm.Node+"/"+itoa(int64(tm.Instance))+"#"+itoa(int64(tm.Attempt)))
		}
		slices.Sort(out)
		return out
	}

	p := statestore.PendingRun{ID: "r1", Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.Now()}
	_, err = keys.CreatePendingRun(ctx, rdb, p)
	require.NoError(t, err)
	batch(eventsv1.TopicWorkflowStart, p.StartRequest())
	require.Equal(t, []string{"TIMER_KIND_DEADLINE a/0#1", "TIMER_KIND_RUN_DEADLINE /0#0"}, timers())

	done("a", 0)
	require.Equal(t, []string{"TIMER_KIND_DEADLINE f/0#1", "TIMER_KIND_DEADLINE f/1#1", "TIMER_KIND_RUN_DEADLINE /0#0", "TIMER_KIND_WAKE w/0#1"},
		timers(), "a's deadline went with its end; f's instances and w armed theirs")
	done("f", 0)
	done("f", 1)
	done("z", 0)
	require.Equal(t, []string{"TIMER_KIND_RUN_DEADLINE /0#0", "TIMER_KIND_WAKE w/0#1"}, timers(), "the instances' deadlines went with their ends")

	batch(eventsv1.TopicWorkflowControl, &eventsv1.RunControl{RunId: "r1", Action: eventsv1.ControlAction_CONTROL_ACTION_CANCEL,
		RequestedAtMs: time.Now().UnixMilli(), RequestedBy: "test"})
	require.Equal(t, "cancelled", rdb.HGet(ctx, keys.Run("r1"), "status").Val())
	require.Empty(t, timers(), "cancelling the run stopped w (its wake goes) and ended the run (its deadline goes)")
}

// TestTimerPollDrainsABurst: one poll fires every due timer of a burst
// larger than a page (here 1,200 against 500), round after round, instead
// of one page per TimerPoll (5,000 a second at the defaults).
func TestTimerPollDrainsABurst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, keys, cfg := workflowEnv(t, "wf", `{"name":"wf","nodes":[{"id":"a","handler":"noop"}]}`)
	cfg.TimerPoll, cfg.LeaderTTL = 10*time.Second, time.Minute // the time bound on a poll's rounds is not what is tested here
	s, err := New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.close(ctx) })
	const burst = 1200
	due := time.Now().Add(-time.Second).UnixMilli()
	zs := make([]redis.Z, burst)
	for i := range zs {
		m := statestore.Timer{Run: "r" + itoa(int64(i)), Kind: int(eventsv1.TimerKind_TIMER_KIND_RETRY), Node: "a", Attempt: 1}.Member()
		zs[i] = redis.Z{Score: float64(due), Member: m}
	}
	shard := keys.TimerShards()[0]
	require.NoError(t, rdb.ZAdd(ctx, shard, zs...).Err())
	require.NoError(t, s.fireAllDue(ctx))
	require.Zero(t, rdb.ZCard(ctx, shard).Val(), "one poll fired the whole burst")
}
