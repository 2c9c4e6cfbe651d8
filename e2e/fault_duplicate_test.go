package e2e

import (
	"encoding/json"
	"maps"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// TestFaultDuplicatedResults runs the same workflows twice on one stack:
// first fault-free, then with every task.complete record published again
// at once and one in three a third time after a delay of up to 3 s (a tap,
// a consumer in its own group, re-produces them). The final state of every
// run of the second pass — run status, every node's and fan-out instance's
// state, attempt, error and output — is identical to the first pass's, and
// the checker finds each instance completed once.
func TestFaultDuplicatedResults(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 2})
	c := f.client(t)
	defs := map[string][]faultNode{"mixed": mixedNodes(), "layered": layered(20, 5, 20*time.Millisecond)}
	n := scale(3, 10)

	want := map[string]runSnapshot{}
	var all []string
	for kind, nodes := range defs {
		ids := startRuns(c, f.register(c, "dupbase-"+kind, nodes), n)
		f.waitTerminal(ids, 60*time.Second)
		all = append(all, ids...)
		want[kind] = f.snapshot(ids[0])
		for _, id := range ids[1:] {
			require.Equal(t, want[kind], f.snapshot(id), "fault-free runs of %s differ", kind)
		}
	}

	requireMixedOutcome(t, want["mixed"])

	tapped := map[string]string{} // workflow name → kind
	for kind, nodes := range defs {
		tapped[f.register(c, "duptap-"+kind, nodes)] = kind
	}
	tap := f.tapResults(func(workflow string) bool { _, ok := tapped[workflow]; return ok })
	got := map[string]string{} // run → kind
	for wf, kind := range tapped {
		for _, id := range startRuns(c, wf, n) {
			got[id] = kind
		}
	}
	ids := slicesOfKeys(got)
	f.waitTerminal(ids, 60*time.Second)
	dups, triples := tap.stop()
	t.Logf("tap: %d records duplicated, %d of them tripled", dups, triples)
	require.Positive(t, triples, "the tap tripled no record")
	f.waitConsumed(orchestratorGroup, 60*time.Second)
	late := 0
	for id, kind := range got {
		require.Equal(t, want[kind], f.snapshot(id), "run %s of %s differs from a fault-free run", id, kind)
		hist, err := f.rdb.LRange(f.ctx(checkTimeout), f.keys.History(id), 0, -1).Result()
		require.NoError(t, err)
		late += len(grep(hist, "late or duplicate result"))
	}
	require.Positive(t, late, "no duplicate reached the orchestrator")
	f.checkInvariants(append(all, ids...), 60*time.Second)
}

// mixedNodes is a workflow whose every outcome is deterministic: a failing
// node that retries, all_done and all_success children of it, a fan-out,
// a `when` that skips, and templates reading upstream outputs.
func mixedNodes() []faultNode {
	return []faultNode{
		{ID: "a", Handler: "noop", Config: map[string]any{"items": []int{1, 2, 3, 4, 5}, "v": "a"}},
		{ID: "b", Handler: "simulate", DependsOn: []string{"a"},
			Config: map[string]any{"duration": "30ms", "output": map[string]any{"b": "<< a.v >>"}}},
		{ID: "flaky", Handler: "simulate", DependsOn: []string{"a"},
			Config: map[string]any{"duration": "10ms", "fail_probability": 1},
			Retry:  map[string]any{"max_attempts": 3, "initial_interval": "50ms"}},
		{ID: "cleanup", Handler: "noop", DependsOn: []string{"flaky", "b"}, TriggerRule: "all_done",
			Config: map[string]any{"done": true}},
		{ID: "blocked", Handler: "noop", DependsOn: []string{"flaky"}, Config: map[string]any{}},
		{ID: "fan", Handler: "noop", DependsOn: []string{"a"}, Foreach: "<< a.items >>",
			Config: map[string]any{"x": "<< item >>"}},
		{ID: "join", Handler: "noop", DependsOn: []string{"fan"}, When: "len(fan) > 10", Config: map[string]any{}},
		{ID: "final", Handler: "noop", DependsOn: []string{"fan", "b"},
			Config: map[string]any{"n": "<< fan | length >>", "b": "<< b.b >>"}},
	}
}

// requireMixedOutcome checks that a fault-free run of mixedNodes went
// through what the comparison is meant to cover: retries, a failure, both
// kinds of skip, an all_done child and a fan-out.
func requireMixedOutcome(t *testing.T, s runSnapshot) {
	t.Helper()
	require.Equal(t, "failed", s.Status)
	for id, want := range map[string]records.NodeState{"a": records.NodeSucceeded, "b": records.NodeSucceeded,
		"flaky": records.NodeFailed, "cleanup": records.NodeSucceeded, "blocked": records.NodeSkipped,
		"fan": records.NodeSucceeded, "join": records.NodeSkipped, "final": records.NodeSucceeded} {
		require.Equal(t, want, s.Nodes[id].State, "node %s", id)
	}
	require.Equal(t, 3, s.Nodes["flaky"].Attempt, "flaky used its three attempts")
	require.True(t, s.Nodes["blocked"].UpstreamFailed)
	require.True(t, s.Nodes["join"].WhenSkip)
	require.Len(t, s.Nodes["fan"].Instances, 5)
	require.JSONEq(t, `{"n":5,"b":"a"}`, s.Nodes["final"].Output)
}

// nodeSnapshot is what must not depend on faults in a node's (or fan-out
// instance's) final record: no times, no worker ids.
type nodeSnapshot struct {
	State                    records.NodeState
	Attempt                  int
	Error, Reason            string
	UpstreamFailed, WhenSkip bool
	Counts                   records.FanOutCounts
	Output                   string
	// Instances and InstanceOutputs hold a fan-out node's instances by index.
	Instances       map[string]nodeSnapshot
	InstanceOutputs map[string]string
}

// runSnapshot is a run's final state without times and ids.
type runSnapshot struct {
	Status, Error string
	Nodes         map[string]nodeSnapshot
}

// snapshot reads run's final state from Redis.
func (f *faultStack) snapshot(run string) runSnapshot {
	t := f.t
	ctx := f.ctx(checkTimeout)
	st, err := f.keys.LoadRun(ctx, f.rdb, run)
	require.NoError(t, err)
	snap := runSnapshot{Status: st.Fields[records.FieldStatus], Error: st.Fields[records.FieldError], Nodes: map[string]nodeSnapshot{}}
	for id, raw := range st.Nodes {
		ns := nodeOf(t, raw, st.Outputs[id])
		if ns.Counts.FanOut {
			insts, err := f.rdb.HGetAll(ctx, f.keys.Instances(run, id)).Result()
			require.NoError(t, err)
			outs, err := f.rdb.HGetAll(ctx, f.keys.InstanceOutputs(run, id)).Result()
			require.NoError(t, err)
			ns.Instances, ns.InstanceOutputs = map[string]nodeSnapshot{}, maps.Clone(outs)
			for i, raw := range insts {
				ns.Instances[i] = nodeOf(t, raw, "")
			}
		}
		snap.Nodes[id] = ns
	}
	return snap
}

// nodeOf decodes a stored record into its fault-independent part.
func nodeOf(t *testing.T, raw, output string) nodeSnapshot {
	rec, err := records.DecodeNodeRecord([]byte(raw))
	require.NoError(t, err)
	if output != "" {
		var v any
		require.NoError(t, json.Unmarshal([]byte(output), &v))
		b, _ := json.Marshal(v) // canonical key order
		output = string(b)
	}
	return nodeSnapshot{State: rec.State, Attempt: rec.Attempt, Error: rec.Error, Reason: rec.Reason,
		UpstreamFailed: rec.UpstreamFailed, WhenSkip: rec.WhenSkipped, Counts: rec.FanOutCounts, Output: output}
}

// slicesOfKeys returns m's keys.
func slicesOfKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestFaultDuplicatedDispatches publishes every task.dispatch record again
// under another key — so the copy usually reaches another worker than the
// original — at once, and one in three a third time after up to 3 s: while
// the original runs, after it finished, after its node succeeded. Each copy
// must be refused by its claim: the execution ledger shows every attempt
// executed once, never two at once, never after its success, and every run
// succeeds with no retry spent.
func TestFaultDuplicatedDispatches(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 3})
	c := f.client(t)
	wf := f.register(c, "dupdispatch", layered(20, 5, 50*time.Millisecond))
	tap := f.tapDispatches(func(w string) bool { return w == wf })
	runs := startRuns(c, wf, scale(6, 30))
	f.waitTerminal(runs, 60*time.Second)
	dups, triples := tap.stop()
	t.Logf("tap: %d dispatches duplicated, %d of them tripled", dups, triples)
	require.Positive(t, triples, "the tap tripled no dispatch")
	rep := f.checkInvariants(runs, 60*time.Second)
	rep.requireAllSucceeded(t)
	for id, nodes := range rep.Nodes {
		for node, rec := range nodes {
			require.Equal(t, 1, rec.Attempt, "run %s node %s: a duplicated dispatch cost a retry", id, node)
		}
	}
}
