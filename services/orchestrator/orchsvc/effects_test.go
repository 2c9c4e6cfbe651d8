package orchsvc

import (
	"testing"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/stretchr/testify/require"
)

func TestEndedAttemptsNameTheClaimsABatchFrees(t *testing.T) {
	t.Parallel()
	def, err := dag.Parse([]byte(`{"name":"wf","nodes":[
		{"id":"a","handler":"noop","retry":{"max_attempts":2,"initial_interval":"1s"}},
		{"id":"f","handler":"noop","depends_on":["a"],"parallel":2}]}`))
	require.NoError(t, err)
	g, err := dag.Compile(def)
	require.NoError(t, err)
	plan, err := core.NewPlan(g)
	require.NoError(t, err)
	r, err := core.NewRun("r1", 1, plan, nil, 1000)
	require.NoError(t, err)
	step := func(ev core.Event) []statestore.Attempt {
		eff := &core.Effects{}
		r.Apply(ev, eff)
		return endedAttempts(r, eff)
	}
	at := func(node string, inst, attempt int) statestore.Attempt {
		return statestore.Attempt{Run: "r1", Node: node, Instance: inst, Attempt: attempt}
	}

	require.Empty(t, step(core.Start{Now: 1000}), "queued attempts keep their claims")
	require.Empty(t, step(core.Result{Now: 1001, Node: "a", Attempt: 1, Status: core.ResultRunning, Worker: "w"}))
	require.Equal(t, []statestore.Attempt{at("a", 0, 1)},
		step(core.Result{Now: 1002, Node: "a", Attempt: 1, Status: core.ResultFailed, Error: "boom", Worker: "w"}),
		"a failed attempt waiting for its retry frees its claim")
	require.Empty(t, step(core.Timer{Now: 3000, Kind: core.TimerRetry, Node: "a", Attempt: 1}), "the retry's attempt 2 is in flight")
	require.Equal(t, []statestore.Attempt{at("a", 0, 2)},
		step(core.Result{Now: 3001, Node: "a", Attempt: 2, Status: core.ResultSucceeded, Output: []byte(`1`), Worker: "w"}))
	require.Equal(t, []statestore.Attempt{at("f", 1, 1)},
		step(core.Result{Now: 3002, Node: "f", Instance: 1, Attempt: 1, Status: core.ResultSucceeded, Output: []byte(`1`), Worker: "w"}))
	require.Equal(t, []statestore.Attempt{at("f", 0, 1)},
		step(core.Result{Now: 3003, Node: "f", Instance: 0, Attempt: 1, Status: core.ResultSucceeded, Output: []byte(`0`), Worker: "w"}),
		"the fan-out node's own success names no claim")
	require.True(t, r.Status.Terminal())
}
