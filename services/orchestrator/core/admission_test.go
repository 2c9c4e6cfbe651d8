package core

import (
	"encoding/json"
	"testing"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// newHeldRun compiles nodes into a run that Hold recorded.
func newHeldRun(t *testing.T, nodes ...dag.Node) (*Run, *Effects) {
	t.Helper()
	g, err := dag.Compile(&dag.Definition{Name: "capped", Concurrency: 1, Nodes: nodes})
	require.NoError(t, err)
	p, err := NewPlan(g)
	require.NoError(t, err)
	r, err := NewRun("r1", 1, p, json.RawMessage(`{}`), 1000)
	require.NoError(t, err)
	eff := &Effects{}
	r.Hold(1000, eff)
	return r, eff
}

func TestHeldRunWaitsForAdmission(t *testing.T) {
	t.Parallel()
	timed := node("A")
	r, eff := newHeldRun(t, timed, node("B", "A"))
	require.True(t, eff.Created, "a held run is recorded")
	require.Len(t, eff.Nodes, 2, "with every node record")
	require.Empty(t, eff.Dispatches)
	require.Equal(t, records.RunPending, r.Status)
	require.True(t, r.Held)

	again := &Effects{}
	r.Apply(Start{Now: 1100}, again)
	require.Empty(t, again.Dispatches, "a redelivered start does not bypass the cap")
	r.Apply(Reconcile{Now: 1_000_000}, again)
	require.Equal(t, records.RunPending, r.Status, "the reconciler leaves a held run alone")

	admit := &Effects{}
	r.Apply(Admit{Now: 2000}, admit)
	require.False(t, r.Held)
	require.False(t, admit.Created, "admission updates the recorded run")
	require.Equal(t, records.RunRunning, r.Status)
	require.Equal(t, int64(2000), r.StartedAt)
	require.Equal(t, []string{"A"}, dispatched(r, admit))

	dup := &Effects{}
	r.Apply(Admit{Now: 2100}, dup)
	require.Empty(t, dup.Dispatches, "a second admission changes nothing")
}

func TestHeldRunCanBeCancelled(t *testing.T) {
	t.Parallel()
	r, _ := newHeldRun(t, node("A"))
	eff := &Effects{}
	r.Apply(Control{Now: 1500, Action: ControlCancel}, eff)
	require.Equal(t, records.RunCancelled, r.Status)
	require.False(t, r.Held)
	require.True(t, eff.RunStatusChanged(), "its end releases its queue place")
	r.Apply(Admit{Now: 2000}, eff)
	require.Empty(t, eff.Dispatches)
}

// The core, not the shell, decides a new run's first step from the facts
// the shell gathered: rejected, held or started.
func TestBeginDecidesRejectHoldOrStart(t *testing.T) {
	t.Parallel()
	g, err := dag.Compile(&dag.Definition{Name: "capped", Concurrency: 1,
		Inputs: map[string]dag.InputSpec{"n": {Type: "integer", Required: true}}, Nodes: []dag.Node{node("A")}})
	require.NoError(t, err)
	p, err := NewPlan(g)
	require.NoError(t, err)

	eff := &Effects{}
	r, err := Begin("bad", 1, p, json.RawMessage(`{}`), 900, Start{Now: 1000}, eff)
	require.Error(t, err, "the input misses a required field")
	require.Equal(t, records.RunFailed, r.Status)
	require.True(t, eff.Created)
	require.Empty(t, eff.Dispatches)

	eff = &Effects{}
	r, err = Begin("held", 1, p, json.RawMessage(`{"n":1}`), 900, Start{Now: 1000, NoSlot: true}, eff)
	require.NoError(t, err)
	require.True(t, r.Held, "no slot: recorded held")
	require.Equal(t, records.RunPending, r.Status)
	require.True(t, eff.Created)
	require.Empty(t, eff.Dispatches)

	eff = &Effects{}
	r.Apply(Reconcile{Now: 5000}, eff)
	require.True(t, r.Held, "a reconcile without a slot leaves it held")
	r.Apply(Reconcile{Now: 6000, Slot: true}, eff)
	require.False(t, r.Held, "a reconcile that brings a slot starts it")
	require.Equal(t, []string{"A"}, dispatched(r, eff))

	eff = &Effects{}
	r, err = Begin("ok", 1, p, json.RawMessage(`{"n":1}`), 900, Start{Now: 1000}, eff)
	require.NoError(t, err)
	require.Equal(t, records.RunRunning, r.Status)
	require.Equal(t, int64(900), r.CreatedAt, "created is the request's time")
	require.Equal(t, []string{"A"}, dispatched(r, eff))
}
