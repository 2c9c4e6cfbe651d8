package core

import (
	"encoding/json"
	"testing"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// newTestRun compiles nodes into a started run.
func newTestRun(t testing.TB, nodes ...dag.Node) (*Run, *Effects) {
	t.Helper()
	def := &dag.Definition{Name: "test", Nodes: nodes}
	g, err := dag.Compile(def)
	require.NoError(t, err)
	p, err := NewPlan(g)
	require.NoError(t, err)
	r, err := NewRun("r1", 1, p, json.RawMessage(`{"who":"world"}`), 1000)
	require.NoError(t, err)
	eff := &Effects{}
	r.Apply(Start{Now: 1000}, eff)
	return r, eff
}

func node(id string, deps ...string) dag.Node {
	return dag.Node{ID: id, Handler: "noop", DependsOn: deps}
}

// dispatched lists node ids of eff's dispatches.
func dispatched(r *Run, eff *Effects) []string {
	var ids []string
	for _, d := range eff.Dispatches {
		ids = append(ids, r.NodeID(d.Node))
	}
	return ids
}

// complete reports node id's current attempt as succeeded with output.
func complete(r *Run, id, output string) *Effects {
	eff := &Effects{}
	r.Apply(Result{Now: 2000, Node: id, Attempt: r.Nodes[r.Index(id)].Attempt, Status: ResultSucceeded, Output: json.RawMessage(output), Worker: "w1"}, eff)
	return eff
}

// failNode reports node id's current attempt as failed.
func failNode(r *Run, id string, permanent bool) *Effects {
	eff := &Effects{}
	r.Apply(Result{Now: 2000, Node: id, Attempt: r.Nodes[r.Index(id)].Attempt, Status: ResultFailed, Error: "boom", Permanent: permanent}, eff)
	return eff
}

func state(r *Run, id string) records.NodeState { return r.Nodes[r.Index(id)].State }
