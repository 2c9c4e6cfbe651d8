package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/testkit/syncbuf"
	"github.com/braidhq/braid/pkg/worker"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

const (
	succeeded = eventsv1.TaskStatus_TASK_STATUS_SUCCEEDED
	failed    = eventsv1.TaskStatus_TASK_STATUS_FAILED
	running   = eventsv1.TaskStatus_TASK_STATUS_RUNNING
)

// echo returns the task's config and ids, counting its calls.
func echo(calls *atomic.Int64) worker.Handler {
	return worker.HandlerFunc(func(_ context.Context, task *worker.Task) (any, error) {
		calls.Add(1)
		return map[string]any{"config": task.Config, "node": task.NodeID, "key": task.IdempotencyKey, "worker": task.WorkerID}, nil
	})
}

func TestDispatchIsExecutedAndReported(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, map[string]worker.Handler{"echo": echo(&calls)}, nil)
	d := b.queued("run1", "a", "echo", `{"x":1}`)
	before := time.Now().UnixMilli()
	b.dispatch(d)

	r := b.result("run1", "a", succeeded)
	require.JSONEq(t, fmt.Sprintf(`{"config":{"x":1},"node":"a","key":"run1/a/0/1","worker":%q}`, b.w.ID()), string(r.GetOutput()))
	require.Equal(t, b.w.ID(), r.GetWorkerId())
	require.EqualValues(t, 1, r.GetAttempt())
	require.Empty(t, r.GetOutputRef())
	require.GreaterOrEqual(t, r.GetStartedAtMs(), before)
	require.GreaterOrEqual(t, r.GetFinishedAtMs(), r.GetStartedAtMs())
	require.EqualValues(t, 1, calls.Load())
}

func TestDuplicateDispatchesExecuteOnce(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, map[string]worker.Handler{"echo": echo(&calls)}, nil)
	d := b.queued("run1", "a", "echo", `{}`)
	for range 3 {
		b.dispatch(d)
	}
	b.result("run1", "a", succeeded)
	require.Eventually(t, func() bool { return b.w.Stats().Dropped == 2 }, within, tick)
	require.EqualValues(t, 1, calls.Load())
	require.EqualValues(t, 1, b.w.Stats().Executed)
}

// TestAttemptWhoseResultWasLostRunsAgain: a dispatch of an attempt this
// worker already ran is dropped while its claim is still the worker's (a
// duplicate), and while its result left less than a heartbeat timeout ago
// (it may still be on its way to being stored; the claim the dispatch took
// is given back), but run again once nobody holds the attempt after that
// while its record still has it queued: the write that stored its result
// was lost (a Redis failover loses a master's newest writes), the
// orchestrator sends it again — to this same worker, as dispatches are
// keyed by run — and dropping it would leave the run waiting for ever.
func TestAttemptWhoseResultWasLostRunsAgain(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, map[string]worker.Handler{"echo": echo(&calls)}, nil)
	ctx := context.Background()
	d := b.queued("run1", "a", "echo", `{}`)
	d.HeartbeatTimeoutMs = 3000
	claim := b.keys.Claim("run1", "a", 0, 1)
	b.dispatch(d)
	b.result("run1", "a", succeeded)
	b.dispatch(d)
	require.Eventually(t, func() bool { return b.w.Stats().Dropped == 1 }, within, tick, "a duplicate while the claim is the worker's")
	require.EqualValues(t, 1, calls.Load())

	require.NoError(t, b.rdb.Del(ctx, claim).Err()) // the record still says queued: the result's write is gone
	b.dispatch(d)
	require.Eventually(t, func() bool { return b.w.Stats().Dropped == 2 }, within, tick, "a dispatch right after the result")
	require.EqualValues(t, 1, calls.Load(), "ran again while its result may still have been on its way")
	require.Zero(t, b.rdb.Exists(ctx, claim).Val(), "the claim the dropped dispatch took was not given back")

	// The reconciler sends it again until it is claimed: once the window
	// has passed, it runs.
	require.Eventually(t, func() bool {
		if len(b.resultsOf("run1", "a")) == 2 {
			return true
		}
		if b.rdb.Exists(ctx, claim).Val() == 0 {
			b.dispatch(d)
		}
		return false
	}, within, 200*time.Millisecond, "the attempt whose result was lost did not run again")
	require.EqualValues(t, 2, calls.Load())
	require.Equal(t, b.w.Holder(), b.rdb.Get(ctx, claim).Val())
}

func TestFetchedBatchIsClaimedAndSettledInOrder(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setupIdle(t, map[string]worker.Handler{"echo": echo(&calls)}, func(c *worker.Config) { c.Concurrency = 16 })
	a := b.queued("run1", "a", "echo", `{}`)
	stale := b.queued("run1", "b", "echo", `{}`)
	b.putNode("run1", "b", 0, `{"s":"queued","a":2}`)
	c := b.queued("run1", "c", "echo", `{}`)
	d := b.queued("run1", "d", "nope", `{}`)
	b.dispatch(a)
	b.dispatch(a)
	b.publishRaw("run1", []byte("\xff not protobuf"))
	b.dispatch(stale)
	b.dispatch(a)
	b.dispatch(c)
	b.dispatch(d)
	b.start() // the dispatches above wait in one partition and arrive together

	b.result("run1", "a", succeeded)
	b.result("run1", "c", succeeded)
	require.Eventually(t, func() bool { return len(b.dlq.all()) == 1 && b.w.Stats().Dropped == 3 && b.w.Stats().Skipped == 1 }, within, tick)
	require.EqualValues(t, 2, calls.Load(), "a duplicated dispatch ran twice, or a stale one ran")
	require.Len(t, b.resultsOf("run1", "a"), 1)
	require.Empty(t, b.resultsOf("run1", "d"), "a dispatch of a handler the worker lacks is not its to settle")
	require.Zero(t, b.rdb.Exists(context.Background(), b.keys.Claim("run1", "d", 0, 1)).Val())
	require.Equal(t, b.w.Holder(), b.rdb.Get(context.Background(), b.keys.Claim("run1", "a", 0, 1)).Val())
}

func TestDispatchOfStaleAttemptIsDropped(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, map[string]worker.Handler{"echo": echo(&calls)}, nil)
	d := b.queued("run1", "a", "echo", `{}`)
	b.putNode("run1", "a", 0, `{"s":"queued","a":2}`) // the orchestrator moved on to attempt 2
	b.dispatch(d)
	require.Eventually(t, func() bool { return b.w.Stats().Dropped == 1 }, within, tick)
	require.Zero(t, calls.Load())

	// The worker keeps going: the current attempt runs.
	d2 := clone(d)
	d2.Attempt = 2
	b.dispatch(d2)
	r := b.result("run1", "a", succeeded)
	require.EqualValues(t, 2, r.GetAttempt())
	require.EqualValues(t, 1, calls.Load())
}

func TestConcurrencyCap(t *testing.T) {
	t.Parallel()
	var now, peak, calls atomic.Int64
	slow := worker.HandlerFunc(func(ctx context.Context, _ *worker.Task) (any, error) {
		calls.Add(1)
		n := now.Add(1)
		defer now.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		select { // simulated work
		case <-time.After(30 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil, nil
	})
	b := setup(t, map[string]worker.Handler{"slow": slow}, func(c *worker.Config) { c.Concurrency = 2 })
	const tasks = 10
	for i := range tasks {
		b.dispatch(b.queued(fmt.Sprintf("run%d", i), "a", "slow", `{}`))
	}
	for i := range tasks {
		b.result(fmt.Sprintf("run%d", i), "a", succeeded)
	}
	require.EqualValues(t, tasks, calls.Load())
	require.LessOrEqual(t, peak.Load(), int64(2), "more handlers ran at once than Concurrency")
	require.Positive(t, peak.Load())
}

func TestPoisonDispatchIsDeadLetteredAndNextProcessed(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, map[string]worker.Handler{"echo": echo(&calls)}, nil)
	bad := b.queued("run1", "a", "echo", `{}`)
	bad.Attempt = 0 // invalid: attempts start at 1
	b.dispatch(bad)
	b.publishRaw("run1", []byte("\xff\xff not protobuf"))
	b.dispatch(b.queued("run1", "b", "echo", `{}`))

	b.result("run1", "b", succeeded)
	require.Eventually(t, func() bool { return len(b.dlq.all()) == 2 }, within, tick)
	reasons := b.dlqReasons()
	require.Contains(t, reasons[0], "attempt 0 < 1")
	require.NotEmpty(t, reasons[1])
	require.EqualValues(t, 2, b.w.Stats().Poison)
	require.EqualValues(t, 1, calls.Load())
}

// TestCorruptRecordDispatchIsDeadLettered: a dispatch whose node record in
// Redis cannot be decoded (the claim script fails on it) is dead-lettered
// with the script's error, and the rest of its batch runs; it used to fail
// the batch's claims again and again, blocking the worker.
func TestCorruptRecordDispatchIsDeadLettered(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setupIdle(t, map[string]worker.Handler{"echo": echo(&calls)}, nil)
	bad := b.queued("run1", "a", "echo", `{}`)
	b.putNode("run1", "a", 0, `{"s":"queued",`)
	b.dispatch(bad)
	b.dispatch(b.queued("run1", "b", "echo", `{}`))
	b.start()

	b.result("run1", "b", succeeded)
	require.Eventually(t, func() bool { return len(b.dlq.all()) == 1 }, within, tick)
	require.Contains(t, b.dlqReasons()[0], "run1")
	require.EqualValues(t, 1, b.w.Stats().Poison)
	require.EqualValues(t, 1, calls.Load())
}

// Two pools with different handlers, each in its default group
// (GroupFor): each runs the dispatches of its own handlers and leaves the
// other's unclaimed, so neither fails a task it cannot run (one group for
// both would hand each pool the other's dispatches, and nobody would run
// them). A handler nobody offers stays queued, unclaimed, for a pool that
// will.
func TestPoolsRunOnlyTheirOwnHandlers(t *testing.T) {
	t.Parallel()
	var echoes, resizes atomic.Int64
	defaultGroup := func(c *worker.Config) { c.Group = "" }
	b := setupIdle(t, map[string]worker.Handler{"echo": echo(&echoes)}, defaultGroup)
	peer := b.peer(map[string]worker.Handler{"resize": echo(&resizes)}, defaultGroup)
	const n = 6
	for i := range n {
		b.dispatch(b.queued("run1", fmt.Sprintf("e%d", i), "echo", `{}`))
		b.dispatch(b.queued("run1", fmt.Sprintf("r%d", i), "resize", `{}`))
	}
	b.dispatch(b.queued("run1", "x", "nope", `{}`))
	b.start()

	for i := range n {
		require.Equal(t, b.w.ID(), b.result("run1", fmt.Sprintf("e%d", i), succeeded).GetWorkerId())
		require.Equal(t, peer.ID(), b.result("run1", fmt.Sprintf("r%d", i), succeeded).GetWorkerId())
	}
	require.Eventually(t, func() bool {
		return b.w.Stats().Skipped == n+1 && peer.Stats().Skipped == n+1
	}, within, tick, "each pool skips the other's %d dispatches and the one nobody offers", n)
	require.EqualValues(t, n, echoes.Load())
	require.EqualValues(t, n, resizes.Load())
	require.Zero(t, b.w.Stats().Dropped+peer.Stats().Dropped, "no claim was refused: no pool tried another's dispatch")
	require.Empty(t, b.resultsOf("run1", "x"))
	require.Zero(t, b.rdb.Exists(context.Background(), b.keys.Claim("run1", "x", 0, 1)).Val())
	require.JSONEq(t, `{"s":"queued","a":1}`, b.rdb.HGet(context.Background(), b.keys.Nodes("run1"), "x").Val())
}

func TestGroupFor(t *testing.T) {
	t.Parallel()
	require.Equal(t, worker.DefaultGroup, worker.GroupFor([]string{"transform", "shell", "noop", "llm", "http", "simulate"}))
	require.Equal(t, worker.DefaultGroup, worker.GroupFor(append(slices.Clone(worker.BuiltinHandlers), "noop")), "a name twice is the same set")
	a := worker.GroupFor([]string{"resize", "noop"})
	require.Equal(t, a, worker.GroupFor([]string{"noop", "resize"}), "order does not matter")
	require.Equal(t, "braid-workers.0971e8cc6e6e0c1f", a, "the example of proto-events/README.md, which workers in other languages follow")
	for _, other := range [][]string{{"noop"}, {"resize"}, {"noop", "resize", "shell"}, {"noop\nresize"}, worker.BuiltinHandlers[1:]} {
		require.NotEqual(t, a, worker.GroupFor(other), "%q", other)
		require.NotEqual(t, worker.DefaultGroup, worker.GroupFor(other), "%q", other)
	}
}

func TestHandlerFailures(t *testing.T) {
	t.Parallel()
	handlers := map[string]worker.Handler{
		"retry": worker.HandlerFunc(func(context.Context, *worker.Task) (any, error) {
			return map[string]int{"exit_code": 3}, fmt.Errorf("exit status 3")
		}),
		"permanent": worker.HandlerFunc(func(context.Context, *worker.Task) (any, error) {
			return nil, worker.Permanent(fmt.Errorf("bad config"))
		}),
		"panic": worker.HandlerFunc(func(context.Context, *worker.Task) (any, error) { panic("boom") }),
		"badutf8": worker.HandlerFunc(func(context.Context, *worker.Task) (any, error) {
			return nil, fmt.Errorf("stderr: \xff\xfe tail")
		}),
		"unmarshalable": worker.HandlerFunc(func(context.Context, *worker.Task) (any, error) {
			return func() {}, nil
		}),
		"slow": worker.HandlerFunc(func(ctx context.Context, task *worker.Task) (any, error) {
			if task.Deadline.IsZero() {
				return nil, fmt.Errorf("no deadline")
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}),
	}
	b := setup(t, handlers, nil)
	tests := []struct {
		name      string
		handler   string
		timeoutMs int64
		wantErr   string
		permanent bool
		output    string
	}{
		{name: "retryable with output", handler: "retry", wantErr: "exit status 3", output: `{"exit_code":3}`},
		{name: "permanent", handler: "permanent", wantErr: "bad config", permanent: true},
		{name: "panic", handler: "panic", wantErr: "handler panicked: boom", permanent: true},
		{name: "error not UTF-8", handler: "badutf8", wantErr: "tail"},
		{name: "output not JSON", handler: "unmarshalable", wantErr: `marshal output of handler "unmarshalable"`, permanent: true},
		{name: "timeout", handler: "slow", timeoutMs: 50, wantErr: "timed out after 50ms: context deadline exceeded"},
	}
	for i, tt := range tests {
		run := fmt.Sprintf("run%d", i)
		d := b.queued(run, "a", tt.handler, `{}`)
		d.TimeoutMs = tt.timeoutMs
		b.dispatch(d)
		r := b.result(run, "a", failed)
		require.Contains(t, r.GetError(), tt.wantErr, tt.name)
		require.Equal(t, tt.permanent, r.GetPermanent(), tt.name)
		if tt.output != "" {
			require.JSONEq(t, tt.output, string(r.GetOutput()), tt.name)
		} else {
			require.Empty(t, r.GetOutput(), tt.name)
		}
	}
}

func TestStartNoticePrecedesResult(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	h := worker.HandlerFunc(func(ctx context.Context, _ *worker.Task) (any, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "done", nil
	})
	b := setup(t, map[string]worker.Handler{"wait": h}, func(c *worker.Config) { c.StartNotice = 10 * time.Millisecond })
	b.dispatch(b.queued("run1", "a", "wait", `{}`))
	r := b.result("run1", "a", running)
	require.Equal(t, b.w.ID(), r.GetWorkerId())
	require.NotZero(t, r.GetStartedAtMs())
	close(release)
	b.result("run1", "a", succeeded)
	all := b.resultsOf("run1", "a")
	require.Len(t, all, 2)
	require.Equal(t, running, all[0].GetStatus())
	var out string
	require.NoError(t, json.Unmarshal(all[1].GetOutput(), &out))
	require.Equal(t, "done", out)
}

// TestAttemptLogsNameTheirAttempt: what an attempt logs carries its run,
// node, instance, attempt and handler (its logger is made on first use).
func TestAttemptLogsNameTheirAttempt(t *testing.T) {
	t.Parallel()
	logs := &syncbuf.Buffer{}
	b := setup(t, map[string]worker.Handler{
		"boom": worker.HandlerFunc(func(context.Context, *worker.Task) (any, error) { panic("boom") }),
	}, func(c *worker.Config) { c.Logger = slog.New(slog.NewJSONHandler(logs, nil)) })
	d := b.queued("run-log", "n", "boom", `{}`)
	d.Instance = 0
	b.dispatch(d)
	b.result("run-log", "n", failed)
	var line map[string]any
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "handler panicked") {
			require.NoError(t, json.Unmarshal([]byte(l), &line))
		}
	}
	require.NotNil(t, line, "no panic logged: %s", logs.String())
	require.Equal(t, "run-log", line[logkey.RunID])
	require.Equal(t, "n", line[logkey.NodeID])
	require.EqualValues(t, 0, line[logkey.Instance])
	require.EqualValues(t, 1, line[logkey.Attempt])
	require.Equal(t, "boom", line[logkey.Handler])
}
