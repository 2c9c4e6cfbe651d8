package orchsvc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// sweepEnv is a Service (not running: the test drives its sweep) and a
// tail of workflow.control that sees every RECONCILE it publishes.
type sweepEnv struct {
	ctx  context.Context
	s    *Service
	rdb  *redis.Client
	tail *eventbus.Tail
}

func newSweepEnv(t *testing.T, rate int) *sweepEnv {
	t.Helper()
	ctx := context.Background()
	rdb, _, cfg := workflowEnv(t, "wf", `{"name":"wf","nodes":[{"id":"a","handler":"noop"}]}`)
	cfg.ReconcileRate, cfg.ReconcileEvery = rate, time.Hour // passes begin only when a test asks
	s, err := New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.close(ctx) })
	tail, err := eventbus.OpenTail(ctx, s.cfg.Bus, eventsv1.TopicWorkflowControl)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tail.Close() })
	return &sweepEnv{ctx: ctx, s: s, rdb: rdb, tail: tail}
}

// activate puts runs into the active index, each in its own shard.
func (e *sweepEnv) activate(t *testing.T, runs ...string) {
	t.Helper()
	for _, run := range runs {
		require.NoError(t, e.rdb.ZAdd(e.ctx, e.s.keys.ActiveRunsOf(run), redis.Z{Score: 1, Member: run}).Err())
	}
}

// deactivate takes runs out of the active index, as their ending writes do.
func (e *sweepEnv) deactivate(t *testing.T, runs ...string) {
	t.Helper()
	for _, run := range runs {
		require.NoError(t, e.rdb.ZRem(e.ctx, e.s.keys.ActiveRunsOf(run), run).Err())
	}
}

// asked reads the RECONCILE controls published since the last call until
// want have come (or 10 s passed), then for 100 ms more, and counts them
// by run.
func (e *sweepEnv) asked(t *testing.T, want int) map[string]int {
	t.Helper()
	got, n := map[string]int{}, 0
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		wait := time.Until(deadline)
		if n >= want {
			wait = 100 * time.Millisecond
		}
		ctx, cancel := context.WithTimeout(e.ctx, wait)
		msgs, err := e.tail.Fetch(ctx, 1000)
		cancel()
		if err != nil {
			require.ErrorIs(t, err, context.DeadlineExceeded)
			if n >= want {
				return got
			}
			continue
		}
		for _, m := range msgs {
			var c eventsv1.RunControl
			require.NoError(t, eventbus.Decode(m, &c))
			require.Equal(t, eventsv1.ControlAction_CONTROL_ACTION_RECONCILE, c.Action)
			require.Equal(t, string(m.Key), c.RunId, "a control is keyed by its run")
			got[c.RunId]++
			n++
		}
	}
	t.Fatalf("%d RECONCILE controls in 10 s, want %d", n, want)
	return nil
}

func runIDs(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%05d", prefix, i)
	}
	return out
}

// TestReconcilePassKeepsItsRate: a pass over 3,000 active runs at 1,000 a
// second asks about every run, and in no step more than the credit it
// earned since the pass began (one poll's worth to start with) plus what a
// ZSCAN page may bring beyond its COUNT hint. It used to publish every
// active run's control in one burst per pass.
func TestReconcilePassKeepsItsRate(t *testing.T) {
	t.Parallel()
	const rate, runs = 1000, 3000
	e := newSweepEnv(t, rate)
	all := runIDs("r", runs)
	e.activate(t, all...)
	sw := newSweep("active", e.s.keys.ActiveRunShards(), rate, e.s.cfg.TimerPoll)
	burst := rate * e.s.cfg.TimerPoll.Seconds() // 100
	t0 := time.Unix(1_700_000_000, 0)
	const step = 50 * time.Millisecond
	var steps int
	for now := t0; steps == 0 || sw.active(); now = now.Add(step) {
		require.Less(t, steps, 200, "a pass over %d runs at %d/s did not end in 10 s of steps", runs, rate)
		require.NoError(t, e.s.sweepStep(e.ctx, sw, now, e.s.cfg.ReconcileEvery))
		steps++
		// Credit earned so far, plus one page's overshoot: a page asks
		// for at most reconcileBatch and ZSCAN returns about that many (a
		// small shard, kept as a listpack, comes whole: at most 128).
		earned := burst + rate*now.Sub(t0).Seconds()
		require.LessOrEqual(t, float64(sw.asked), earned+128, "step %d at +%s asked %d runs", steps, now.Sub(t0), sw.asked)
	}
	require.GreaterOrEqual(t, steps, 55, "a pass over %d runs at %d/s took %d steps of %s", runs, rate, steps, step)
	got := e.asked(t, runs)
	for _, run := range all {
		require.GreaterOrEqual(t, got[run], 1, "run %s was not asked to reconcile", run)
	}
	require.Len(t, got, runs, "only active runs are asked")
}

// TestReconcilePassSurvivesChurn: runs that end during a pass (and runs
// that start) do not make it miss the runs active throughout. Pages by
// rank, as the pass used to read them, skip as many runs as left before
// the page.
func TestReconcilePassSurvivesChurn(t *testing.T) {
	t.Parallel()
	const rate = 1000
	e := newSweepEnv(t, rate)
	leaving, staying := runIDs("leaving", 1500), runIDs("staying", 1500)
	e.activate(t, leaving...)
	e.activate(t, staying...)
	sw := newSweep("active", e.s.keys.ActiveRunShards(), rate, e.s.cfg.TimerPoll)
	now := time.Unix(1_700_000_000, 0)
	for steps := 0; steps == 0 || sw.active(); steps++ {
		require.Less(t, steps, 200, "the pass did not end")
		require.NoError(t, e.s.sweepStep(e.ctx, sw, now, e.s.cfg.ReconcileEvery))
		if steps < 10 { // runs end and start while the pass is under way
			e.deactivate(t, leaving[steps*150:(steps+1)*150]...)
			e.activate(t, runIDs(fmt.Sprintf("new%d", steps), 50)...)
		}
		now = now.Add(100 * time.Millisecond)
	}
	got := e.asked(t, len(staying))
	for _, run := range staying {
		require.GreaterOrEqual(t, got[run], 1, "run %s, active throughout, was not asked to reconcile", run)
	}
}

// TestReconcilePassRequests: a pass begins at once at start-up and after a
// reset (a new leader), every ReconcileEvery after the last began, and —
// when a worker starts or dies — at once, or right after the pass under
// way rather than from its start again.
func TestReconcilePassRequests(t *testing.T) {
	t.Parallel()
	const n = 400             // more than a listpack holds: ZSCAN pages keep near their COUNT
	e := newSweepEnv(t, 1000) // 100 runs per 100-ms poll
	e.activate(t, runIDs("r", n)...)
	e.s.cfg.ReconcileEvery = 10 * time.Second
	sw := newSweep("active", e.s.keys.ActiveRunShards(), 1000, e.s.cfg.TimerPoll)
	now := time.Unix(1_700_000_000, 0)
	step := func() {
		t.Helper()
		require.NoError(t, e.s.sweepStep(e.ctx, sw, now, e.s.cfg.ReconcileEvery))
		now = now.Add(100 * time.Millisecond)
	}
	finish := func() int {
		t.Helper()
		for i := 0; sw.active(); i++ {
			require.Less(t, i, 100, "the pass did not end")
			step()
		}
		return sw.asked
	}
	step()
	require.True(t, sw.active(), "no pass at start-up")
	require.GreaterOrEqual(t, finish(), n)
	began := sw.started
	step()
	require.False(t, sw.active(), "a pass began before ReconcileEvery")

	sw.request() // a worker started while no pass was under way
	step()
	require.True(t, sw.active(), "a requested pass waits")
	require.GreaterOrEqual(t, finish(), n)
	require.NotEqual(t, began, sw.started)

	now = sw.started.Add(e.s.cfg.ReconcileEvery)
	step()
	require.True(t, sw.active(), "no pass after ReconcileEvery")
	asked := sw.asked
	require.Positive(t, asked)
	sw.request() // a worker died during the pass: it goes on, and another follows at once
	step()
	require.Greater(t, sw.asked, asked, "the pass under way started over")
	require.GreaterOrEqual(t, finish(), n)
	step()
	require.True(t, sw.active(), "no pass right after the one a request came during")
	require.GreaterOrEqual(t, finish(), n)
	step()
	require.False(t, sw.active())

	now = now.Add(time.Second)
	step()
	sw.reset() // leadership lost and regained: a pass at once
	step()
	require.True(t, sw.active())
	require.GreaterOrEqual(t, finish(), n)
	e.asked(t, 5*n)
}

// startAndLeave has an orchestrator of cfg start run of workflow "wf"
// (version 1) as the api asks for it (pending record, then the start
// message) and stop, letting its locks go: the next orchestrator takes the
// run over.
func startAndLeave(t *testing.T, rdb redis.Cmdable, keys statestore.Keys, cfg Config, run string) {
	t.Helper()
	ctx := context.Background()
	first, err := New(ctx, cfg)
	require.NoError(t, err)
	defer first.close(ctx)
	p := statestore.PendingRun{ID: run, Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.Now()}
	_, err = keys.CreatePendingRun(ctx, rdb, p)
	require.NoError(t, err)
	m, err := eventbus.NewMessage(eventsv1.TopicWorkflowStart, run, p.StartRequest())
	require.NoError(t, err)
	require.NoError(t, first.tryBatch(ctx, []eventbus.Message{m}))
}

// TestIdleReconcileLetsItsLockGo: a reconcile request for a run nobody
// held, that finds nothing to repair (it waits on an approval), lets the
// run's lock go at the next lease tick instead of keeping and refreshing it
// for IdleRelease; a run the batch changed, or one held before it, keeps
// its lock.
func TestIdleReconcileLetsItsLockGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, keys, cfg := workflowEnv(t, "wf", `{"name":"wf","nodes":[
	  {"id":"gate","handler":"approval"},{"id":"b","handler":"noop","depends_on":["gate"]}]}`)
	control := func(s *Service, action eventsv1.ControlAction, node string) {
		t.Helper()
		m, err := eventbus.NewMessage(eventsv1.TopicWorkflowControl, "r1", &eventsv1.RunControl{
			RunId: "r1", Action: action, NodeId: node, RequestedAtMs: time.Now().UnixMilli()})
		require.NoError(t, err)
		require.NoError(t, s.tryBatch(ctx, []eventbus.Message{m}))
	}
	startAndLeave(t, rdb, keys, cfg, "r1")

	cfg.ID = "orch-b"
	s, err := New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.close(ctx) })
	tick := func() { s.leases.maintain(ctx, time.Now()) }

	control(s, eventsv1.ControlAction_CONTROL_ACTION_RECONCILE, "")
	require.True(t, s.leases.held("r1"), "the reconcile took the run's lock")
	tick()
	require.False(t, s.leases.held("r1"), "an idle run's reconcile kept its lock past the next tick")

	control(s, eventsv1.ControlAction_CONTROL_ACTION_APPROVE, "gate") // changes the run: b is dispatched
	tick()
	require.True(t, s.leases.held("r1"), "a run the batch changed let its lock go")
	control(s, eventsv1.ControlAction_CONTROL_ACTION_RECONCILE, "") // held before the batch
	tick()
	require.True(t, s.leases.held("r1"), "a reconcile of a run held before it let the lock go")
}

// TestBusyRunsAreReconciledFirst: with 3,000 runs waiting on approvals
// and five busy ones, a pass over the busy runs asks about all five at
// once — at start-up, and again at once when a worker dies — while the
// pass over every active run goes at a quarter of the rate: it asks about
// every waiting run in time, never faster than its credit, and begins
// again only ReconcileAllEvery after it began. Before the busy index a
// dead worker's attempts waited for a pass over all 3,005 runs.
func TestBusyRunsAreReconciledFirst(t *testing.T) {
	t.Parallel()
	const rate, idle = 1000, 3000
	const allPerSecond = rate / 4
	e := newSweepEnv(t, rate)
	e.s.cfg.ReconcileEvery, e.s.cfg.ReconcileAllEvery = 5*time.Second, time.Minute
	waiting, busy := runIDs("waiting", idle), runIDs("busy", 5)
	e.activate(t, waiting...)
	e.activate(t, busy...)
	for _, run := range busy {
		require.NoError(t, e.rdb.ZAdd(e.ctx, e.s.keys.BusyRunsOf(run), redis.Z{Score: 1, Member: run}).Err())
	}
	rc := e.s.newReconciler()
	t0 := time.Unix(1_700_000_000, 0)
	now := t0
	step := func() {
		t.Helper()
		require.NoError(t, e.s.reconcileStep(e.ctx, rc, now))
		now = now.Add(100 * time.Millisecond)
	}
	allBurst := allPerSecond * e.s.cfg.TimerPoll.Seconds()

	step()
	got := e.asked(t, len(busy))
	for _, run := range busy {
		// The pass over every active run began too and may have met it.
		require.GreaterOrEqual(t, got[run], 1, "busy run %s at start-up", run)
	}
	require.Equal(t, len(busy), rc.busy.asked, "the busy pass asked about other runs than the busy ones")
	require.False(t, rc.busy.active(), "the busy pass did not end in its first step")
	for range 9 {
		step()
	}
	require.LessOrEqual(t, float64(rc.all.asked), allBurst+allPerSecond*now.Sub(t0).Seconds()+128,
		"the pass over every active run asked %d in its first second", rc.all.asked)
	e.asked(t, 0) // what the pass over every active run asked so far

	rc.busy.request() // a worker died
	step()
	got = e.asked(t, len(busy))
	for _, run := range busy {
		require.GreaterOrEqual(t, got[run], 1, "busy run %s after a worker died", run)
	}

	for i := 0; rc.all.active(); i++ {
		require.Less(t, i, 200, "the pass over %d active runs at %d/s did not end in 20 s of steps", idle+len(busy), allPerSecond)
		step()
	}
	require.GreaterOrEqual(t, now.Sub(t0), time.Duration(float64(idle)/allPerSecond*0.9*float64(time.Second)),
		"the pass over every active run went faster than its rate")
	require.GreaterOrEqual(t, rc.all.asked, idle+len(busy))
	require.Equal(t, float64(rc.all.asked), testutil.ToFloat64(e.s.metrics.reconciles[passActive]), "braid_orchestrator_reconciles_total{pass=active}")
	require.GreaterOrEqual(t, testutil.ToFloat64(e.s.metrics.reconciles[passBusy]), float64(2*len(busy)), "braid_orchestrator_reconciles_total{pass=busy}")
	step()
	require.False(t, rc.all.active(), "the pass over every active run began again before ReconcileAllEvery")
	require.True(t, rc.busy.active() || rc.busy.started.After(t0), "the busy runs' passes stopped")
}
