package orchsvc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// writeGate holds, or fails, the next pipeline that writes (see writes)
// while armed: held, it waits for release before it runs; failed, it runs
// nothing and returns errGate, as when Redis died before the write landed.
type writeGate struct {
	armed *atomic.Bool
	fail  bool
	// match, when set, picks the pipelines held instead of writes.
	match   func([]redis.Cmder) bool
	held    chan struct{} // closed once a write is being held
	release chan struct{}
}

var errGate = errors.New("write gate: the write never reached Redis")

func (g writeGate) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (g writeGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (g writeGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		match := g.match
		if match == nil {
			match = writes
		}
		if !match(cmds) || !g.armed.CompareAndSwap(true, false) {
			return next(ctx, cmds)
		}
		if g.fail {
			for _, c := range cmds {
				c.SetErr(errGate)
			}
			return errGate
		}
		close(g.held)
		<-g.release
		return next(ctx, cmds)
	}
}

// gatedStart is a service whose Redis writes pass writeGate, a reader of
// its dispatches, and the start request of run r1 of workflow wf (def), its
// pending record written.
type gatedStart struct {
	s     *Service
	rdb   *redis.Client
	keys  statestore.Keys
	cons  *eventbus.Consumer
	gate  writeGate
	start eventbus.Message
}

func newGatedStart(t *testing.T, wf, def string, fail bool) gatedStart {
	ctx := context.Background()
	rdb, keys, cfg := workflowEnv(t, wf, def)
	s, err := New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.close(ctx) })
	cons, err := eventbus.NewConsumer(ctx, cfg.Bus, testinfra.UniqueName(t, "reader"), eventsv1.TopicTaskDispatch)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cons.Close() })
	gate := writeGate{armed: &atomic.Bool{}, fail: fail, held: make(chan struct{}), release: make(chan struct{})}
	rdb.AddHook(gate)

	p := statestore.PendingRun{ID: "r1", Workflow: wf, Version: 1, Input: []byte(`{}`), Created: time.Now()}
	_, err = keys.CreatePendingRun(ctx, rdb, p)
	require.NoError(t, err)
	start, err := eventbus.NewMessage(eventsv1.TopicWorkflowStart, "r1", p.StartRequest())
	require.NoError(t, err)
	return gatedStart{s: s, rdb: rdb, keys: keys, cons: cons, gate: gate, start: start}
}

// TestDispatchBesideTheWrite: a batch's dispatches are published while the
// write that queues their attempts is on its way, not after it. A worker's
// claim of a dispatch that overtook its write answers ahead (it claims
// again shortly) until the write lands, then ok. When the write fails, the
// dispatch is out but its attempt was never stored, so nothing claims it;
// the batch tried again publishes after its write (an outage does not
// multiply dispatches), and the dispatch already out is then claimable
// too: the same attempt, claimed once.
func TestDispatchBesideTheWrite(t *testing.T) {
	t.Parallel()
	for _, fail := range []bool{false, true} {
		name := map[bool]string{false: "write held", true: "write failed"}[fail]
		t.Run(name, func(t *testing.T) { t.Parallel(); dispatchBesideTheWrite(t, fail) })
	}
}

// TestBigStartDispatchesAfterTheWrite: the start of a run of more than
// aheadMaxNodes roots writes a record per root, which takes Redis longer
// than a worker's pauses between claims, so its first dispatches wait for
// that write and are claimed at their first try. (A run with one root and
// many other nodes writes one record: its dispatch goes beside the write.)
func TestBigStartDispatchesAfterTheWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nodes := []string{`{"id":"root","handler":"noop"}`}
	for i := range aheadMaxNodes { // roots all: the start queues, and writes, each
		nodes = append(nodes, fmt.Sprintf(`{"id":"n%d","handler":"noop"}`, i))
	}
	g := newGatedStart(t, "big", `{"name":"big","nodes":[`+strings.Join(nodes, ",")+`]}`, false)
	s, rdb, keys, cons, gate, start := g.s, g.rdb, g.keys, g.cons, g.gate, g.start

	gate.armed.Store(true)
	done := make(chan error, 1)
	go func() { done <- s.tryBatch(ctx, []eventbus.Message{start}) }()
	<-gate.held
	fctx, cancel := context.WithTimeout(ctx, time.Second)
	msgs, err := cons.Fetch(fctx, 1)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "%d dispatch(es) published while their run's big first write was held", len(msgs))
	close(gate.release)
	require.NoError(t, <-done)
	fctx, cancel = context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msgs, err = cons.Fetch(fctx, 1)
	require.NoError(t, err, "no dispatch after the write")
	d := &eventsv1.TaskDispatch{}
	require.NoError(t, eventbus.Decode(msgs[0], d))
	res, err := keys.ClaimAttempts(ctx, rdb, []statestore.ClaimRequest{{Attempt: statestore.Attempt{Run: "r1", Node: d.GetNodeId(), Attempt: 1}, TTL: time.Minute}}, "w1")
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimOK, res[0].Result, "the dispatch found its attempt stored")
}

func dispatchBesideTheWrite(t *testing.T, fail bool) {
	ctx := context.Background()
	g := newGatedStart(t, "wf", `{"name":"wf","nodes":[{"id":"a","handler":"noop"}]}`, fail)
	s, rdb, keys, cons, gate, start := g.s, g.rdb, g.keys, g.cons, g.gate, g.start
	attempt := statestore.Attempt{Run: "r1", Node: "a", Attempt: 1}
	claim := func(worker string) statestore.ClaimResult {
		res, err := keys.ClaimAttempts(ctx, rdb, []statestore.ClaimRequest{{Attempt: attempt, TTL: time.Minute}}, worker)
		require.NoError(t, err)
		return res[0].Result
	}
	nextDispatch := func() *eventsv1.TaskDispatch {
		fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		msgs, err := cons.Fetch(fctx, 1)
		require.NoError(t, err, "no dispatch was published")
		d := &eventsv1.TaskDispatch{}
		require.NoError(t, eventbus.Decode(msgs[0], d))
		return d
	}

	gate.armed.Store(true)
	done := make(chan error, 1)
	go func() { done <- s.tryBatch(ctx, []eventbus.Message{start}) }()
	d := nextDispatch()
	require.Equal(t, "a", d.GetNodeId())
	require.EqualValues(t, 1, d.GetAttempt())
	require.Equal(t, statestore.ClaimAhead, claim("w1"), "the dispatch is out before its attempt is stored: a claim must wait")
	if !fail {
		<-gate.held
		close(gate.release)
		require.NoError(t, <-done)
		require.Equal(t, statestore.ClaimOK, claim("w1"), "once the write landed the dispatch is claimed")
		require.Equal(t, statestore.ClaimTaken, claim("w2"), "by one worker only")
		return
	}
	require.ErrorIs(t, <-done, errGate)
	require.Equal(t, statestore.ClaimAhead, claim("w1"), "a failed write stored no attempt")
	require.NoError(t, s.tryBatchAhead(ctx, []eventbus.Message{start}, false)) // the retry, as handleBatch makes it
	again := nextDispatch()
	require.EqualValues(t, 1, again.GetAttempt(), "the batch applied again decides the same attempt")
	require.Equal(t, statestore.ClaimOK, claim("w1"))
	require.Equal(t, statestore.ClaimTaken, claim("w2"), "either dispatch is claimed once")
}

// TestLostAttemptDispatchesAfterTheWrite: the write that declares an
// attempt lost (its worker restarted under the same id, so the claim's
// holder is an incarnation that is gone) deletes that orphaned claim, and
// the attempt's dispatch goes after it: published beside it, the dispatch
// could reach the restarted worker first, whose claim would find the old
// one and drop the dispatch as taken — the attempt would then wait for the
// reconciler's re-send (core.RedispatchAfter, 30 s) although its worker
// was back within a second.
func TestLostAttemptDispatchesAfterTheWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGatedStart(t, "wf", `{"name":"wf","nodes":[{"id":"a","handler":"noop"}]}`, false)
	s, rdb, keys, cons := g.s, g.rdb, g.keys, g.cons
	gate := writeGate{armed: &atomic.Bool{}, held: make(chan struct{}), release: make(chan struct{}), match: applies}
	rdb.AddHook(gate) // holds the run's next apply, even one that writes nothing else
	attempt := statestore.Attempt{Run: "r1", Node: "a", Attempt: 1}
	claim := func(h records.Holder) statestore.ClaimResult {
		res, err := keys.ClaimAttempts(ctx, rdb, []statestore.ClaimRequest{{Attempt: attempt, TTL: time.Minute}}, h.String())
		require.NoError(t, err)
		return res[0].Result
	}
	fetch := func(wait time.Duration) ([]eventbus.Message, error) {
		fctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		return cons.Fetch(fctx, 1)
	}

	require.NoError(t, s.tryBatch(ctx, []eventbus.Message{g.start}))
	_, err := fetch(10 * time.Second)
	require.NoError(t, err, "the run's first dispatch")
	before, after := records.Holder{Worker: "w", Incarnation: "i1"}, records.Holder{Worker: "w", Incarnation: "i2"}
	_, err = keys.RenewLiveness(ctx, rdb, "w", before.Incarnation, time.Minute)
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimOK, claim(before))
	_, err = keys.RenewLiveness(ctx, rdb, "w", after.Incarnation, time.Minute) // killed and started again
	require.NoError(t, err)

	reconcile, err := eventbus.NewMessage(eventsv1.TopicWorkflowControl, "r1", &eventsv1.RunControl{
		RunId: "r1", Action: eventsv1.ControlAction_CONTROL_ACTION_RECONCILE, RequestedAtMs: time.Now().UnixMilli()})
	require.NoError(t, err)
	gate.armed.Store(true)
	done := make(chan error, 1)
	go func() { done <- s.tryBatch(ctx, []eventbus.Message{reconcile}) }()
	<-gate.held
	if msgs, err := fetch(time.Second); err == nil {
		got := claim(after)
		require.Failf(t, "the lost attempt's dispatch went out beside the write that deletes its orphaned claim",
			"%d dispatch(es) published while the write was held; the restarted worker's claim of it answered %s", len(msgs), got)
	} else {
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
	close(gate.release)
	require.NoError(t, <-done)
	msgs, err := fetch(10 * time.Second)
	require.NoError(t, err, "no dispatch of the lost attempt")
	d := &eventsv1.TaskDispatch{}
	require.NoError(t, eventbus.Decode(msgs[0], d))
	require.Equal(t, "a", d.GetNodeId())
	require.EqualValues(t, 1, d.GetAttempt(), "a loss costs no attempt")
	require.Equal(t, statestore.ClaimOK, claim(after), "the restarted worker claims the attempt its predecessor lost")
	node, err := rdb.HGet(ctx, keys.Nodes("r1"), "a").Result()
	require.NoError(t, err)
	require.Contains(t, node, `"l":1`, "the attempt is counted lost once")
}

// applies reports whether cmds run the store's apply script (a run's write).
func applies(cmds []redis.Cmder) bool {
	names := statestore.ScriptNames()
	for _, c := range cmds {
		if args := c.Args(); c.Name() == "evalsha" && len(args) > 1 && names[fmt.Sprint(args[1])] == "apply" {
			return true
		}
	}
	return false
}
