package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// fanNode is a noop fan-out node echoing its instance's item/index/count.
func fanNode(id string, mod func(*dag.Node), deps ...string) dag.Node {
	n := node(id, deps...)
	n.Config = json.RawMessage(`{"item":"<< item | default null >>","i":"<< index >>","n":"<< count >>"}`)
	mod(&n)
	return n
}

func foreach(tmpl string, conc int) func(*dag.Node) {
	return func(n *dag.Node) { n.Foreach, n.Concurrency = tmpl, conc }
}

func parallel(v string, conc int) func(*dag.Node) {
	return func(n *dag.Node) {
		n.Parallel, n.Concurrency = json.RawMessage(v), conc
		n.Config = json.RawMessage(`{"i":"<< index >>","n":"<< count >>"}`)
	}
}

// instResult reports instance idx of node id (current attempt) as st.
func instResult(r *Run, id string, idx int, st ResultStatus, out string) *Effects {
	eff := &Effects{}
	attempt := 0
	if rec := r.fans[r.Index(id)]; rec != nil && rec.insts[idx] != nil {
		attempt = rec.insts[idx].Attempt
	}
	r.Apply(Result{Now: 3000, Node: id, Instance: idx, Attempt: attempt, Status: st, Output: json.RawMessage(out), Error: "boom"}, eff)
	return eff
}

func instances(eff *Effects) []int {
	var out []int
	for _, d := range eff.Dispatches {
		out = append(out, d.Instance)
	}
	return out
}

// itemsJSON is an upstream output {"items":[0,0,...]} of n items.
func itemsJSON(n int) string {
	return `{"items":[` + strings.TrimSuffix(strings.Repeat("0,", n), ",") + `]}`
}

func TestFanOutSizes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		up      string // output of the upstream node "a"
		mod     func(*dag.Node)
		want    []int  // instances dispatched at launch
		wantOut string // output when the node ends at launch
		wantErr string // error when the node fails at launch
	}{
		{name: "foreach", up: `{"items":["x","y","z"]}`, mod: foreach("<< a.items >>", 0), want: []int{0, 1, 2}},
		{name: "foreach capped", up: `{"items":[1,2,3,4,5]}`, mod: foreach("<< a.items >>", 2), want: []int{0, 1}},
		{name: "foreach empty", up: `{"items":[]}`, mod: foreach("<< a.items >>", 0), wantOut: `[]`},
		{name: "foreach not an array", up: `{"items":{"k":1}}`, mod: foreach("<< a.items >>", 0),
			wantErr: `node f: foreach "<< a.items >>" must yield a JSON array, got an object`},
		{name: "foreach missing key", up: `{}`, mod: foreach("<< a.items >>", 0), wantErr: `node f: foreach "<< a.items >>"`},
		{name: "parallel literal", up: `{}`, mod: parallel(`3`, 0), want: []int{0, 1, 2}},
		{name: "parallel from upstream", up: `{"count":4}`, mod: parallel(`"<< a.count >>"`, 3), want: []int{0, 1, 2}},
		{name: "parallel zero", up: `{"count":0}`, mod: parallel(`"<< a.count >>"`, 0), wantOut: `[]`},
		{name: "parallel negative", up: `{"count":-2}`, mod: parallel(`"<< a.count >>"`, 0),
			wantErr: `node f: parallel "<< a.count >>" must resolve to an integer from 0 to 1000000, got a number -2`},
		{name: "parallel fraction", up: `{"count":1.5}`, mod: parallel(`"<< a.count >>"`, 0),
			wantErr: `node f: parallel "<< a.count >>" must resolve to an integer`},
		{name: "parallel text", up: `{"count":"many"}`, mod: parallel(`"<< a.count >>"`, 0),
			wantErr: `node f: parallel "<< a.count >>" must resolve to an integer`},
		{name: "parallel over the limit", up: fmt.Sprintf(`{"count":%d}`, MaxInstances+1), mod: parallel(`"<< a.count >>"`, 0),
			wantErr: fmt.Sprintf(`node f: parallel "<< a.count >>" must resolve to an integer from 0 to %d, got a number %d`, MaxInstances, MaxInstances+1)},
		{name: "foreach at the limit", up: itemsJSON(MaxInstances), mod: foreach("<< a.items >>", 2), want: []int{0, 1}},
		{name: "foreach over the limit", up: itemsJSON(MaxInstances + 1), mod: foreach("<< a.items >>", 0),
			wantErr: fmt.Sprintf(`node f: foreach yields %d items, over the limit of %d`, MaxInstances+1, MaxInstances)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, _ := newTestRun(t, node("a"), fanNode("f", tt.mod, "a"), node("down", "f"))
			eff := complete(r, "a", tt.up)
			f := r.Nodes[r.Index("f")]
			switch {
			case tt.wantErr != "":
				require.Equal(t, records.NodeFailed, f.State)
				require.Contains(t, f.Error, tt.wantErr)
				require.Equal(t, records.NodeSkipped, state(r, "down"))
			case tt.wantOut != "":
				require.Equal(t, records.NodeSucceeded, f.State)
				require.JSONEq(t, tt.wantOut, string(r.Outputs[r.Index("f")]))
				require.Equal(t, []string{"down"}, dispatched(r, eff))
			default:
				require.Equal(t, records.NodeRunning, f.State)
				require.Equal(t, tt.want, instances(eff))
				require.Equal(t, len(tt.want), f.Active)
			}
		})
	}
}

func TestFanOutOutputInIndexOrder(t *testing.T) {
	t.Parallel()
	down := node("down", "f")
	down.Config = json.RawMessage(`{"all":"<< f >>","third":"<< f[2].item >>"}`)
	r, _ := newTestRun(t, node("a"), fanNode("f", foreach("<< a.items >>", 2), "a"), down)
	eff := complete(r, "a", `{"items":["p","q","r","s"]}`)
	require.Equal(t, []int{0, 1}, instances(eff))
	require.JSONEq(t, `{"item":"q","i":1,"n":4}`, string(eff.Dispatches[1].Config))
	require.Equal(t, IdempotencyKey("r1", "f", 1, 1), eff.Dispatches[1].IdempotencyKey)
	require.Equal(t, 4, eff.Dispatches[1].Count)
	require.Equal(t, []json.RawMessage{[]byte(`"p"`), []byte(`"q"`), []byte(`"r"`), []byte(`"s"`)}, eff.FanOut.Items[r.Index("f")])

	// Completions in reverse order of dispatch; each frees one slot.
	eff = instResult(r, "f", 1, ResultSucceeded, `{"item":"q"}`)
	require.Equal(t, []int{2}, instances(eff))
	eff = instResult(r, "f", 2, ResultSucceeded, `{"item":"r"}`)
	require.Equal(t, []int{3}, instances(eff))
	require.Empty(t, instances(instResult(r, "f", 3, ResultSucceeded, `{"item":"s"}`)))
	dup := instResult(r, "f", 3, ResultSucceeded, `{"item":"again"}`)
	require.Empty(t, dup.Dispatches)
	require.NotEmpty(t, dup.History)
	eff = instResult(r, "f", 0, ResultSucceeded, `{"item":"p"}`)
	require.Equal(t, records.NodeSucceeded, state(r, "f"))
	require.JSONEq(t, `[{"item":"p"},{"item":"q"},{"item":"r"},{"item":"s"}]`, string(r.Outputs[r.Index("f")]))
	require.Equal(t, []string{"down"}, dispatched(r, eff))
	require.JSONEq(t, `{"all":[{"item":"p"},{"item":"q"},{"item":"r"},{"item":"s"}],"third":"r"}`, string(eff.Dispatches[0].Config))
	c := r.Nodes[r.Index("f")].FanOutCounts
	require.Equal(t, records.FanOutCounts{FanOut: true, Count: 4, Next: 4, Succeeded: 4, InstanceHigh: 1}, c)
}

func TestFanOutInstanceFailure(t *testing.T) {
	t.Parallel()
	retry := func(n *dag.Node) {
		foreach("<< a.items >>", 0)(n)
		n.Retry = &dag.RetryPolicy{MaxAttempts: 2, Backoff: dag.BackoffExponential}
	}
	done := node("cleanup", "f")
	done.TriggerRule = dag.TriggerAllDone
	r, _ := newTestRun(t, node("a"), fanNode("f", retry, "a"), node("down", "f"), done)
	complete(r, "a", `{"items":[1,2,3]}`)
	instResult(r, "f", 0, ResultSucceeded, `0`)
	eff := instResult(r, "f", 1, ResultFailed, ``)
	require.Len(t, eff.Timers, 1)
	require.Equal(t, TimerArm{Kind: TimerRetry, Node: "f", Instance: 1, Attempt: 1, At: eff.Timers[0].At}, eff.Timers[0])
	eff = &Effects{}
	r.Apply(Timer{Now: retryAt(r, "f", 1), Kind: TimerRetry, Node: "f", Instance: 1, Attempt: 1}, eff)
	require.Equal(t, []int{1}, instances(eff))
	require.Equal(t, 2, eff.Dispatches[0].Attempt)
	instResult(r, "f", 1, ResultFailed, ``) // retries exhausted
	require.Equal(t, records.NodeRunning, state(r, "f"), "the node waits for every instance")
	eff = instResult(r, "f", 2, ResultSucceeded, `2`)
	f := r.Nodes[r.Index("f")]
	require.Equal(t, records.NodeFailed, f.State)
	require.Equal(t, "1 of 3 instances failed (0 cancelled); first: instance 1: boom", f.Error)
	require.Equal(t, records.NodeSkipped, state(r, "down"))
	require.Equal(t, []string{"cleanup"}, dispatched(r, eff))

	// Retry re-runs the failed instance only, and the node's downstream.
	complete(r, "cleanup", `{}`)
	require.Equal(t, records.RunFailed, r.Status)
	eff = &Effects{}
	r.Apply(Control{Now: 5000, Action: ControlRetry}, eff)
	require.Equal(t, []int{1}, instances(eff))
	require.Equal(t, 3, eff.Dispatches[0].Attempt)
	// The retry gives the instance its policy's attempts again: 3 fails, 4 runs.
	eff = instResult(r, "f", 1, ResultFailed, ``)
	require.Equal(t, TimerArm{Kind: TimerRetry, Node: "f", Instance: 1, Attempt: 3, At: retryAt(r, "f", 1)}, eff.Timers[0])
	require.Equal(t, int64(3000)+dag.DefaultInitialInterval.Milliseconds(), retryAt(r, "f", 1), "the backoff restarts with the budget")
	eff = &Effects{}
	r.Apply(Timer{Now: retryAt(r, "f", 1), Kind: TimerRetry, Node: "f", Instance: 1, Attempt: 3}, eff)
	require.Equal(t, 4, eff.Dispatches[0].Attempt)
	eff = instResult(r, "f", 1, ResultSucceeded, `1`)
	require.Equal(t, records.NodeSucceeded, state(r, "f"))
	require.JSONEq(t, `[0,1,2]`, string(r.Outputs[r.Index("f")]))
	require.ElementsMatch(t, []string{"down", "cleanup"}, dispatched(r, eff))

	// Rerun from the node resets every instance.
	complete(r, "down", `{}`)
	complete(r, "cleanup", `{}`)
	require.Equal(t, records.RunSucceeded, r.Status)
	eff = &Effects{}
	r.Apply(Control{Now: 6000, Action: ControlRerunFrom, Node: "f"}, eff)
	require.Equal(t, []int{r.Index("f")}, eff.FanOut.Resets)
	require.Equal(t, []int{0, 1, 2}, instances(eff))
	// Every instance starts afresh, numbered on from the highest attempt
	// of the launch before (instance 1's 4th): no idempotency key repeats.
	for _, d := range eff.Dispatches {
		require.Equal(t, 5, d.Attempt, "instance %d", d.Instance)
		require.Equal(t, IdempotencyKey(r.ID, "f", d.Instance, 5), d.IdempotencyKey)
	}
	require.Equal(t, 6, r.fans[r.Index("f")].insts[0].MaxAttempt(2), "attempt 5 of 6: the policy's 2 again")
}

// retryAt returns when instance idx of node id retries.
func retryAt(r *Run, id string, idx int) int64 {
	return r.fans[r.Index(id)].insts[idx].RetryAt
}

func TestFanOutCancelAndReconcile(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, node("a"), fanNode("f", parallel(`5`, 3), "a"))
	complete(r, "a", `{}`)
	i := r.Index("f")
	instResult(r, "f", 0, ResultRunning, ``)
	require.Equal(t, []InstanceAttempt{{Slot{i, 0}, 1}, {Slot{i, 1}, 1}, {Slot{i, 2}, 1}}, r.InFlightInstances())
	require.NotContains(t, r.InFlight(), i, "the fan-out node itself has no claim")

	// Instance 0 runs without a claim (its worker died); 1 is claimed; 2 was never delivered.
	eff := &Effects{}
	now := int64(3000) + RedispatchAfter.Milliseconds()
	r.Apply(Reconcile{Now: now, Instances: map[Slot]bool{{i, 1}: true}}, eff)
	require.Equal(t, records.NodeQueued, r.fans[i].insts[0].State, "lost, not failed: the same attempt again")
	require.Equal(t, 1, r.fans[i].insts[0].Lost)
	require.Equal(t, []int{0, 2}, instances(eff), "instance 0 re-sent after its loss, instance 2 because it was never claimed")
	require.Equal(t, 1, eff.Dispatches[0].Attempt)
	require.Equal(t, 1, eff.Dispatches[1].Attempt)

	// Instance 2's handler offered by no live worker: not re-sent.
	eff = &Effects{}
	r.Apply(Reconcile{Now: now + RedispatchAfter.Milliseconds() + 1, Instances: map[Slot]bool{{i, 0}: true, {i, 1}: true},
		Offered: func(string) bool { return false }}, eff)
	require.Empty(t, eff.Dispatches)
	require.Empty(t, eff.History)

	eff = &Effects{}
	r.Apply(Control{Now: now + 1, Action: ControlCancel}, eff)
	require.Equal(t, records.RunCancelled, r.Status)
	f := r.Nodes[i]
	require.Equal(t, records.NodeCancelled, f.State)
	require.Equal(t, records.FanOutCounts{FanOut: true, Count: 5, Next: 3, Cancelled: 3, InstanceHigh: 1}, f.FanOutCounts)
	require.Len(t, eff.FanOut.Instances, 3)
	for s, rec := range eff.FanOut.Instances {
		require.Equal(t, records.NodeCancelled, rec.State, "instance %d", s.Instance)
	}
	require.Empty(t, eff.Dispatches)
}

func TestFanOutConcurrencyDefault(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, node("a"), fanNode("f", foreach("<< a.items >>", 0), "a"))
	items := make([]int, 2500)
	b, _ := json.Marshal(map[string]any{"items": items})
	eff := complete(r, "a", string(b))
	require.Len(t, eff.Dispatches, DefaultFanOutConcurrency)
	eff = instResult(r, "f", 7, ResultSucceeded, `7`)
	require.Equal(t, []int{DefaultFanOutConcurrency}, instances(eff))
	require.Equal(t, fmt.Sprint(DefaultFanOutConcurrency), fmt.Sprint(r.Nodes[r.Index("f")].Active))
}
