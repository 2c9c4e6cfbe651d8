package orchsvc

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// crashCut models Redis (or the orchestrator) dying in the middle of a
// batch's write pipeline: while armed, the next pipeline that writes runs
// only its first script call — the run's fenced write is stored — and loses
// the rest. With prefix set, the commands queued before that call run too:
// on one Redis, AOF and replicas keep a prefix of what ran. Without it,
// only the write survives: a cluster whose other masters (holding the
// indexes) failed.
type crashCut struct {
	armed  *atomic.Bool
	prefix bool
}

var errCut = errors.New("crash cut: part of the pipeline was lost")

func (c crashCut) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (c crashCut) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (c crashCut) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !writes(cmds) {
			return next(ctx, cmds)
		}
		for i, cmd := range cmds {
			if name := cmd.Name(); (name == "evalsha" || name == "eval") && c.armed.CompareAndSwap(true, false) {
				kept := cmds[i : i+1]
				if c.prefix {
					kept = cmds[:i+1]
				}
				_ = next(ctx, kept)
				for _, lost := range cmds[i+1:] {
					lost.SetErr(errCut)
				}
				return errCut
			}
		}
		return next(ctx, cmds)
	}
}

// writes reports whether a pipeline changes something: a batch's gather
// reads are left alone.
func writes(cmds []redis.Cmder) bool {
	for _, cmd := range cmds {
		if n := cmd.Name(); n != "evalsha" && n != "eval" && !strings.HasPrefix(n, "h") && !strings.HasPrefix(n, "get") &&
			!strings.HasPrefix(n, "mget") && !strings.HasPrefix(n, "zrange") && n != "exists" && n != "lrange" {
			return true
		}
	}
	return false
}

// TestCrashAfterTheWriteLeavesTheRunFindable: whatever a crash cuts off
// around a batch's write, the run stays where the reconciler looks (the
// active-runs index), even though the redelivered events then apply as
// duplicates that write nothing; when a prefix survives (one Redis), its
// timers stay set too. Entries that make the system look at a run go
// before the write, those that let it forget a run after, and a run loaded
// from Redis is put back in the index with its next write.
func TestCrashAfterTheWriteLeavesTheRunFindable(t *testing.T) {
	t.Parallel()
	t.Run("no crash", func(t *testing.T) { t.Parallel(); crashAfterTheWrite(t, noCut) })
	t.Run("prefix kept", func(t *testing.T) { t.Parallel(); crashAfterTheWrite(t, prefixKept) })
	t.Run("only the write kept", func(t *testing.T) { t.Parallel(); crashAfterTheWrite(t, writeKept) })
}

type cutMode int

const (
	noCut      cutMode = iota
	prefixKept         // one Redis
	writeKept          // a cluster
)

func crashAfterTheWrite(t *testing.T, mode cutMode) {
	ctx := context.Background()
	def := `{"name":"wf","nodes":[{"id":"a","handler":"noop","retry":{"max_attempts":2,"backoff":"fixed","initial_interval":"1h"}}]}`
	rdb, keys, cfg := workflowEnv(t, "wf", def)
	incarnation := func() *Service {
		s, err := New(ctx, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { s.close(ctx) })
		return s
	}
	cut := crashCut{armed: &atomic.Bool{}, prefix: mode == prefixKept}
	rdb.AddHook(cut)
	msg := func(topic string, m proto.Message) eventbus.Message {
		out, err := eventbus.NewMessage(topic, "r1", m)
		require.NoError(t, err)
		return out
	}
	failed := func(attempt int32) eventbus.Message {
		return msg(eventsv1.TopicTaskComplete, &eventsv1.TaskResult{RunId: "r1", NodeId: "a", Attempt: attempt,
			Status: eventsv1.TaskStatus_TASK_STATUS_FAILED, Error: "boom", Permanent: attempt == 2,
			StartedAtMs: time.Now().UnixMilli(), FinishedAtMs: time.Now().UnixMilli()})
	}
	// crashing runs batch (unless mode is noCut) with the cut armed: the write is stored, the rest
	// of the pipeline is lost, and the process is gone. Its successor (same
	// stable id) is handed the same batch again.
	crashing := func(s *Service, batch ...eventbus.Message) *Service {
		if mode == noCut {
			require.NoError(t, s.tryBatch(ctx, batch))
			return s
		}
		cut.armed.Store(true)
		require.Error(t, s.tryBatch(ctx, batch))
		require.False(t, cut.armed.Load(), "the batch wrote nothing to cut")
		s.close(ctx)
		next := incarnation()
		require.NoError(t, next.tryBatch(ctx, batch))
		return next
	}
	active := func() []string { return rdb.ZRange(ctx, keys.ActiveRunShards()[0], 0, -1).Val() }
	busy := func() []string { return rdb.ZRange(ctx, keys.BusyRunShards()[0], 0, -1).Val() }
	node := func() records.NodeRecord {
		rec, err := records.DecodeNodeRecord([]byte(rdb.HGet(ctx, keys.Nodes("r1"), "a").Val()))
		require.NoError(t, err)
		return rec
	}

	p := statestore.PendingRun{ID: "r1", Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.Now()}
	_, err := keys.CreatePendingRun(ctx, rdb, p)
	require.NoError(t, err)
	s := incarnation()
	require.NoError(t, s.tryBatch(ctx, []eventbus.Message{msg(eventsv1.TopicWorkflowStart, p.StartRequest())}))
	require.Equal(t, []string{"r1"}, active())
	require.Equal(t, []string{"r1"}, busy(), "a run that dispatched is not among the busy runs")

	// Attempt 1 fails: the node waits an hour for its retry, on a durable timer.
	s = crashing(s, failed(1))
	require.Equal(t, records.NodeRetryWait, node().State)
	if mode != writeKept {
		require.NotEmpty(t, rdb.ZRange(ctx, keys.TimerShards()[0], 0, -1).Val(), "the retry's timer was lost with the pipeline's tail")
	} // else the reconciler fires the overdue retry, once it finds the run:
	require.Equal(t, []string{"r1"}, active())

	// The retry fails for good, and the run with it.
	require.NoError(t, rdb.Del(ctx, keys.TimerShards()[0]).Err())
	require.NoError(t, s.tryBatch(ctx, []eventbus.Message{msg(eventsv1.TopicWorkflowControl, &eventsv1.RunControl{
		RunId: "r1", Action: eventsv1.ControlAction_CONTROL_ACTION_TIMER, Timer: eventsv1.TimerKind_TIMER_KIND_RETRY,
		NodeId: "a", Attempt: 1, RequestedAtMs: time.Now().UnixMilli()})}))
	require.NoError(t, s.tryBatch(ctx, []eventbus.Message{failed(2)}))
	require.Equal(t, "failed", rdb.HGet(ctx, keys.Run("r1"), records.FieldStatus).Val())
	require.Empty(t, active())
	require.Empty(t, busy(), "a run that ended stayed among the busy runs")

	// A user retries the run: it is running again, and must be found again.
	crashing(s, msg(eventsv1.TopicWorkflowControl, &eventsv1.RunControl{RunId: "r1",
		Action: eventsv1.ControlAction_CONTROL_ACTION_RETRY, RequestedAtMs: time.Now().UnixMilli()}))
	require.Equal(t, "running", rdb.HGet(ctx, keys.Run("r1"), records.FieldStatus).Val())
	require.Equal(t, []string{"r1"}, active(), "a running run fell out of the index the reconciler walks")
	require.Equal(t, []string{"r1"}, busy(), "a run with an attempt queued fell out of the busy runs")
}
