package core

import (
	"testing"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// TestLostAttemptIsNotFailed: a node without retries whose worker dies is
// dispatched again with the same attempt number and idempotency key, and
// the run then succeeds; the loss is in the node's past.
func TestLostAttemptIsNotFailed(t *testing.T) {
	t.Parallel()
	r, first := newTestRun(t, node("A"), node("B", "A"))
	key := first.Dispatches[0].IdempotencyKey
	r.Apply(Result{Now: 1100, Node: "A", Attempt: 1, Status: ResultRunning, Worker: "w1"}, &Effects{})
	eff := &Effects{}
	r.Apply(Reconcile{Now: 2000}, eff)
	require.Equal(t, []string{"A"}, dispatched(r, eff))
	d := eff.Dispatches[0]
	require.Equal(t, 1, d.Attempt)
	require.Equal(t, key, d.IdempotencyKey, "the same logical attempt: side effects keyed on it dedupe")
	require.Equal(t, records.NodeQueued, state(r, "A"))
	require.Empty(t, r.Nodes[0].Worker)
	require.Equal(t, "lost: worker w1 stopped responding", r.Nodes[0].Past[0].Error)
	require.Contains(t, eff.History[0], "node A attempt 1 lost: worker w1 stopped responding (loss 1 of 3); dispatched again")
	require.Empty(t, eff.Orphans, "the claim lapsed: nothing to delete")

	complete(r, "A", `{}`)
	complete(r, "B", `{}`)
	require.Equal(t, records.RunSucceeded, r.Status)
	require.Equal(t, 1, r.Nodes[0].Attempt)
}

// TestOrphanedClaimIsLostAtOnce: a queued attempt claimed by a worker
// incarnation that is gone (never reported running) is lost at once, not
// after RedispatchAfter, and the write deletes exactly that holder's claim.
func TestOrphanedClaimIsLostAtOnce(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, node("A"))
	dead := records.Holder{Incarnation: "inc1", Worker: "dev-worker-1"}
	eff := &Effects{}
	r.Apply(Reconcile{Now: 1500, Orphaned: map[int]records.Holder{0: dead}}, eff)
	require.Equal(t, []string{"A"}, dispatched(r, eff))
	require.Equal(t, []OrphanClaim{{Node: 0, Attempt: 1, Holder: "inc1/dev-worker-1"}}, eff.Orphans)
	require.Equal(t, "lost: worker dev-worker-1 stopped responding", r.Nodes[0].Past[0].Error)
	require.Equal(t, int64(1500), r.Nodes[0].QueuedAt)

	// A second reconcile in the same batch read the same claim before the
	// first one's write deleted it: the same loss is not counted twice.
	r.Apply(Reconcile{Now: 1550, Orphaned: map[int]records.Holder{0: dead}}, eff)
	require.Equal(t, 1, r.Nodes[0].Lost)
	require.Len(t, eff.Dispatches, 1)

	// A queued attempt with no claim at all, recently queued: left alone.
	eff = &Effects{}
	r.Apply(Reconcile{Now: 1600}, eff)
	require.Empty(t, eff.Dispatches)
}

// TestLostBound: the third loss of one attempt fails the node, saying so,
// even with attempts left in its retry policy; a new attempt starts with
// no losses.
func TestLostBound(t *testing.T) {
	t.Parallel()
	a := node("A")
	a.Retry = &dag.RetryPolicy{MaxAttempts: 5}
	r, _ := newTestRun(t, a)
	for k := 1; k <= 2; k++ {
		eff := &Effects{}
		r.Apply(Reconcile{Now: int64(1000 * (k + 1)), Orphaned: map[int]records.Holder{0: {Incarnation: "x", Worker: "w"}}}, eff)
		require.Equal(t, records.NodeQueued, state(r, "A"), "loss %d", k)
		require.Equal(t, k, r.Nodes[0].Lost)
	}
	eff := &Effects{}
	r.Apply(Reconcile{Now: 9000, Orphaned: map[int]records.Holder{0: {Incarnation: "x", Worker: "w"}}}, eff)
	require.Equal(t, records.NodeFailed, state(r, "A"))
	require.Equal(t, "attempt 1 lost 3 times (limit 3); last: worker w stopped responding", r.Nodes[0].Error)
	require.Equal(t, records.RunFailed, r.Status)
	require.Len(t, r.Nodes[0].Past, 2, "two losses, then the failure is the record itself")

	// A configured bound of 1 fails at the first loss.
	r2, _ := newTestRun(t, node("A"))
	r2.Apply(Reconcile{Now: 2000, MaxLost: 1, Orphaned: map[int]records.Holder{0: {Incarnation: "x", Worker: "w"}}}, &Effects{})
	require.Equal(t, records.NodeFailed, state(r2, "A"))
}

// TestLostThenRetryStartsCountingAgain: losses count per attempt.
func TestLostThenRetryStartsCountingAgain(t *testing.T) {
	t.Parallel()
	a := node("A")
	a.Retry = &dag.RetryPolicy{MaxAttempts: 2}
	r, _ := newTestRun(t, a)
	r.Apply(Reconcile{Now: 2000, Orphaned: map[int]records.Holder{0: {Incarnation: "x", Worker: "w"}}}, &Effects{})
	r.Apply(Reconcile{Now: 3000, Orphaned: map[int]records.Holder{0: {Incarnation: "y", Worker: "w"}}}, &Effects{})
	require.Equal(t, 2, r.Nodes[0].Lost)
	failNode(r, "A", false)
	r.Apply(Timer{Now: 1_000_000, Kind: TimerRetry, Node: "A", Attempt: 1}, &Effects{})
	require.Equal(t, 2, r.Nodes[0].Attempt)
	require.Zero(t, r.Nodes[0].Lost)
	r.Apply(Reconcile{Now: 1_000_100, Orphaned: map[int]records.Holder{0: {Incarnation: "z", Worker: "w"}}}, &Effects{})
	require.Equal(t, records.NodeQueued, state(r, "A"), "the second attempt's first loss")
	outcomes := []records.Outcome{}
	for _, p := range r.Nodes[0].Past {
		outcomes = append(outcomes, p.Outcome)
	}
	require.Equal(t, []records.Outcome{records.OutcomeLost, records.OutcomeLost, records.OutcomeFailed, records.OutcomeLost}, outcomes)
}

// TestInstanceLost: a fan-out instance whose worker died is dispatched
// again unchanged; its third loss fails it (and so the node).
func TestInstanceLost(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, node("a"), fanNode("f", parallel(`2`, 0), "a"))
	complete(r, "a", `{}`)
	i := r.Index("f")
	slot := Slot{Node: i, Instance: 1}
	dead := map[Slot]records.Holder{slot: {Incarnation: "x", Worker: "w9"}}
	eff := &Effects{}
	r.Apply(Reconcile{Now: 5000, Instances: map[Slot]bool{{i, 0}: true}, OrphanedInstances: dead}, eff)
	require.Equal(t, []int{1}, instances(eff))
	require.Equal(t, 1, eff.Dispatches[0].Attempt)
	require.Equal(t, []OrphanClaim{{Node: i, Instance: 1, FanOut: true, Attempt: 1, Holder: "x/w9"}}, eff.Orphans)
	require.Equal(t, records.OutcomeLost, r.fans[i].insts[1].Past[0].Outcome)
	for now := int64(6000); now <= 7000; now += 1000 {
		r.Apply(Reconcile{Now: now, Instances: map[Slot]bool{{i, 0}: true}, OrphanedInstances: dead}, &Effects{})
	}
	require.Equal(t, records.NodeFailed, r.fans[i].insts[1].State)
	require.Contains(t, r.fans[i].insts[1].Error, "lost 3 times (limit 3)")
	instResult(r, "f", 0, ResultSucceeded, `0`)
	require.Equal(t, records.NodeFailed, state(r, "f"))
}

// TestHandBackAndResetKeepThePast: a hand-back and a retry of the run are
// in the node's past, so the API can list every run of every attempt.
func TestHandBackAndResetKeepThePast(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, node("A"))
	r.Apply(Result{Now: 1100, Node: "A", Attempt: 1, Status: ResultFailed, HandedBack: true, Worker: "w1"}, &Effects{})
	failNode(r, "A", true)
	r.Apply(Control{Now: 5000, Action: ControlRetry}, &Effects{})
	past := r.Nodes[0].Past
	require.Len(t, past, 2)
	require.Equal(t, records.OutcomeHandedBack, past[0].Outcome)
	require.Equal(t, records.OutcomeReset, past[1].Outcome)
	require.Equal(t, records.NodeFailed, past[1].State)
	require.Equal(t, 2, r.Nodes[0].Attempt, "attempt numbers keep growing across a retry")
}
