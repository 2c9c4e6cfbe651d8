package core

import (
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// TestHandedBackAttemptIsDispatchedAgain: a result marked handed_back
// sends the same attempt out again, costs no attempt (the node has only
// one), moves the deadline and leaves the old deadline timer a no-op; the
// attempt then succeeds normally.
func TestHandedBackAttemptIsDispatchedAgain(t *testing.T) {
	t.Parallel()
	a := node("A")
	a.Timeout = dag.Duration(10 * time.Second)
	r, eff := newTestRun(t, a, node("B", "A"))
	oldDeadline := eff.Timers[0].At
	eff = &Effects{}
	r.Apply(Result{Now: 3000, Node: "A", Attempt: 1, Status: ResultFailed, HandedBack: true, Worker: "w1",
		Error: "worker w1 shutting down"}, eff)
	require.Equal(t, records.NodeQueued, state(r, "A"))
	require.Equal(t, 1, r.Nodes[0].Attempt, "a hand-back costs no attempt")
	require.Equal(t, []string{"A"}, dispatched(r, eff))
	require.Equal(t, 1, eff.Dispatches[0].Attempt)
	require.Equal(t, IdempotencyKey("r1", "A", 0, 1), eff.Dispatches[0].IdempotencyKey)
	require.Len(t, eff.Timers, 1)
	require.Greater(t, eff.Timers[0].At, oldDeadline)
	require.Contains(t, eff.History[0], "handed back by worker w1")

	eff = &Effects{}
	r.Apply(Timer{Now: oldDeadline, Kind: TimerDeadline, Node: "A", Attempt: 1}, eff)
	require.Equal(t, records.NodeQueued, state(r, "A"), "the first deadline no longer applies")

	complete(r, "A", `{}`)
	require.Equal(t, records.NodeSucceeded, state(r, "A"))
}

// TestHandBackInPausedRunCountsAsFailure: a paused run sends nothing, so
// a hand-back there is an ordinary failed attempt (the retry policy,
// here none, applies) rather than a dispatch.
func TestHandBackInPausedRunCountsAsFailure(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, node("A"))
	r.Paused = true
	eff := &Effects{}
	r.Apply(Result{Now: 3000, Node: "A", Attempt: 1, Status: ResultFailed, HandedBack: true, Worker: "w1", Error: "shutting down"}, eff)
	require.Empty(t, eff.Dispatches)
	require.Equal(t, records.NodeFailed, state(r, "A"))
}

// TestHandedBackInstanceIsDispatchedAgain is the same for a fan-out instance.
func TestHandedBackInstanceIsDispatchedAgain(t *testing.T) {
	t.Parallel()
	b := node("B", "A")
	foreach("<< A.items >>", 0)(&b)
	r, _ := newTestRun(t, node("A"), b)
	eff := complete(r, "A", `{"items":[1,2]}`)
	require.Len(t, eff.Dispatches, 2)
	eff = &Effects{}
	r.Apply(Result{Now: 3000, Node: "B", Instance: 1, Attempt: 1, Status: ResultFailed, HandedBack: true, Worker: "w1"}, eff)
	require.Len(t, eff.Dispatches, 1)
	require.Equal(t, 1, eff.Dispatches[0].Instance)
	require.Equal(t, 1, eff.Dispatches[0].Attempt)
	require.Equal(t, records.NodeQueued, r.fans[1].insts[1].State)
	for idx := range 2 {
		r.Apply(Result{Now: 4000, Node: "B", Instance: idx, Attempt: 1, Status: ResultSucceeded, Output: []byte(`1`)}, &Effects{})
	}
	require.Equal(t, records.NodeSucceeded, state(r, "B"))
}
