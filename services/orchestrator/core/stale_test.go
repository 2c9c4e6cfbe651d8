package core

import (
	"encoding/json"
	"testing"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// TestStaleAttemptResultChangesNothing: attempt 1 failed and attempt 2 is
// in flight; attempt 1's late success (a timed-out worker finishing after
// all) must not complete the node, record its output or start its child.
func TestStaleAttemptResultChangesNothing(t *testing.T) {
	t.Parallel()
	a := node("A")
	a.Retry = &dag.RetryPolicy{MaxAttempts: 3}
	r, _ := newTestRun(t, a, node("B", "A"))
	failNode(r, "A", false)
	eff := &Effects{}
	r.Apply(Timer{Now: 3000, Kind: TimerRetry, Node: "A", Attempt: 1}, eff)
	require.Equal(t, 2, r.Nodes[r.Index("A")].Attempt)

	for _, st := range []ResultStatus{ResultSucceeded, ResultFailed, ResultRunning} {
		eff = &Effects{}
		r.Apply(Result{Now: 3500, Node: "A", Attempt: 1, Status: st, Output: json.RawMessage(`"late"`), Worker: "old"}, eff)
		require.Empty(t, eff.Dispatches, "status %v", st)
		require.Empty(t, eff.Nodes, "status %v", st)
		require.Empty(t, eff.Timers, "status %v", st)
		require.Equal(t, 2, r.Nodes[r.Index("A")].Attempt)
		require.Equal(t, records.NodeQueued, state(r, "A"), "status %v", st)
		require.Nil(t, r.Outputs[r.Index("A")])
	}
	require.Equal(t, []string{"B"}, dispatched(r, complete(r, "A", `"fresh"`)), "the current attempt still completes it")
}

// TestStaleInstanceResultChangesNothing: the same for one instance of a
// fan-out node.
func TestStaleInstanceResultChangesNothing(t *testing.T) {
	t.Parallel()
	retry := func(n *dag.Node) {
		foreach("<< a.items >>", 0)(n)
		n.Retry = &dag.RetryPolicy{MaxAttempts: 3}
	}
	r, _ := newTestRun(t, node("a"), fanNode("f", retry, "a"), node("down", "f"))
	complete(r, "a", `{"items":[1,2]}`)
	instResult(r, "f", 0, ResultFailed, ``)
	eff := &Effects{}
	r.Apply(Timer{Now: retryAt(r, "f", 0), Kind: TimerRetry, Node: "f", Instance: 0, Attempt: 1}, eff)
	require.Equal(t, 2, eff.Dispatches[0].Attempt)
	instResult(r, "f", 1, ResultSucceeded, `1`)

	eff = &Effects{}
	r.Apply(Result{Now: 3500, Node: "f", Instance: 0, Attempt: 1, Status: ResultSucceeded, Output: json.RawMessage(`"late"`)}, eff)
	require.Empty(t, eff.Dispatches)
	require.Empty(t, eff.Nodes)
	require.Equal(t, records.NodeRunning, state(r, "f"), "instance 0's attempt 2 is still out")
	require.Equal(t, 2, r.fans[r.Index("f")].insts[0].Attempt)
	eff = instResult(r, "f", 0, ResultSucceeded, `0`)
	require.Equal(t, records.NodeSucceeded, state(r, "f"))
	require.Equal(t, []string{"down"}, dispatched(r, eff))
}
