package core

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

func waitNode(id, cfg string, deps ...string) dag.Node {
	return dag.Node{ID: id, Handler: HandlerWait, Config: json.RawMessage(cfg), DependsOn: deps}
}

func approvalNode(id string, deps ...string) dag.Node {
	return dag.Node{ID: id, Handler: HandlerApproval, Config: json.RawMessage(`{"message":"ship it?"}`), DependsOn: deps}
}

func TestWaitSleepsOnADurableTimer(t *testing.T) {
	t.Parallel()
	r, eff := newTestRun(t, waitNode("nap", `{"duration":"1500ms"}`), node("after", "nap"))
	require.Empty(t, eff.Dispatches, "a wait node never goes to a worker")
	require.Equal(t, records.NodeRunning, state(r, "nap"))
	require.Equal(t, []TimerArm{{Kind: TimerWake, Node: "nap", Attempt: 1, At: 2500}}, eff.Timers)

	early := &Effects{}
	r.Apply(Timer{Now: 2000, Kind: TimerWake, Node: "nap", Attempt: 1}, early)
	require.Equal(t, records.NodeRunning, state(r, "nap"), "a wake before its time is ignored")

	stale := &Effects{}
	r.Apply(Timer{Now: 3000, Kind: TimerWake, Node: "nap", Attempt: 2}, stale)
	require.Equal(t, records.NodeRunning, state(r, "nap"), "a wake for another attempt is ignored")

	woke := &Effects{}
	r.Apply(Timer{Now: 2600, Kind: TimerWake, Node: "nap", Attempt: 1}, woke)
	require.Equal(t, records.NodeSucceeded, state(r, "nap"))
	require.Equal(t, []string{"after"}, dispatched(r, woke))
	require.JSONEq(t, `{"waited_ms":1600,"until":"1970-01-01T00:00:02.5Z"}`, string(r.Outputs[r.Index("nap")]))

	dup := &Effects{}
	r.Apply(Timer{Now: 2700, Kind: TimerWake, Node: "nap", Attempt: 1}, dup)
	require.Empty(t, dup.Nodes, "a duplicate wake changes nothing")
}

func TestWaitUntilAndTemplatedDuration(t *testing.T) {
	t.Parallel()
	until := time.UnixMilli(5000).UTC().Format(time.RFC3339Nano)
	r, eff := newTestRun(t, waitNode("at", `{"until":"`+until+`"}`))
	require.Equal(t, int64(5000), eff.Timers[0].At)
	require.Equal(t, int64(5000), r.Nodes[0].WakeAt)

	past := time.UnixMilli(10).UTC().Format(time.RFC3339Nano)
	_, eff = newTestRun(t, waitNode("past", `{"until":"`+past+`"}`))
	require.Equal(t, int64(1000), eff.Timers[0].At, "a time in the past wakes at once")

	r, _ = newTestRun(t, node("cfg"), waitNode("nap", `{"duration":"<< cfg.d >>"}`, "cfg"))
	complete(r, "cfg", `{"d":"not a duration"}`)
	require.Equal(t, records.NodeFailed, state(r, "nap"))
	require.Contains(t, r.Nodes[1].Error, `wait duration "not a duration"`)
	require.Equal(t, records.RunFailed, r.Status)
}

func TestWaitSurvivesALostTimer(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, waitNode("nap", `{"duration":"1s"}`))
	eff := &Effects{}
	r.Apply(Reconcile{Now: 1500}, eff)
	require.Equal(t, records.NodeRunning, state(r, "nap"), "no claim is expected of a wait node")
	require.Empty(t, r.InFlight(), "built-in nodes have no worker claim to look up")
	r.Apply(Reconcile{Now: 2100}, eff)
	require.Equal(t, records.NodeSucceeded, state(r, "nap"), "the reconciler wakes an overdue wait")
	require.Equal(t, records.RunSucceeded, r.Status)
}

func TestApprovalWaitsForADecision(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		action ControlAction
		node   records.NodeState
		run    records.RunStatus
		next   []string
	}{
		{"approve", ControlApprove, records.NodeSucceeded, records.RunSucceeded, []string{"deploy"}},
		{"reject", ControlReject, records.NodeFailed, records.RunFailed, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, eff := newTestRun(t, approvalNode("gate"), node("deploy", "gate"))
			require.Empty(t, eff.Dispatches)
			require.Equal(t, records.NodeQueued, state(r, "gate"))
			eff = &Effects{}
			r.Apply(Reconcile{Now: 1000 + RedispatchAfter.Milliseconds()}, eff)
			require.Empty(t, eff.Dispatches, "the reconciler never dispatches an approval node")
			require.Equal(t, records.NodeQueued, state(r, "gate"))

			eff = &Effects{}
			r.Apply(Control{Now: 4000, Action: tt.action, Node: "gate", Reason: "looks fine", By: "alice"}, eff)
			require.Equal(t, tt.node, state(r, "gate"))
			require.Equal(t, tt.next, dispatched(r, eff))
			if tt.action == ControlApprove {
				complete(r, "deploy", `{}`)
				var out map[string]any
				require.NoError(t, json.Unmarshal(r.Outputs[0], &out))
				require.Equal(t, true, out["approved"])
				require.Equal(t, "alice", out["by"])
				require.Equal(t, "looks fine", out["comment"])
			} else {
				require.Equal(t, "rejected by alice: looks fine", r.Nodes[0].Error)
				require.Equal(t, records.NodeSkipped, state(r, "deploy"))
			}
			require.Equal(t, tt.run, r.Status)

			again := &Effects{}
			r.Apply(Control{Now: 5000, Action: ControlReject, Node: "gate"}, again)
			require.Empty(t, again.Nodes, "a decided approval cannot be decided again")
			require.Len(t, again.History, 1)
		})
	}
}

func TestApprovalRejectsNonApprovalNodesAndTimesOut(t *testing.T) {
	t.Parallel()
	gate := approvalNode("gate")
	gate.Timeout = dag.Duration(2 * time.Second)
	r, eff := newTestRun(t, node("work"), gate)
	require.Equal(t, []TimerArm{{Kind: TimerDeadline, Node: "gate", Attempt: 1, At: 3000}}, eff.Timers,
		"an approval deadline has no worker grace")

	eff = &Effects{}
	r.Apply(Control{Now: 1500, Action: ControlApprove, Node: "work"}, eff)
	require.Equal(t, records.NodeQueued, state(r, "work"), "approving a worker node does nothing")
	require.Contains(t, eff.History[0], "not an approval node")

	eff = &Effects{}
	r.Apply(Timer{Now: 3000, Kind: TimerDeadline, Node: "gate", Attempt: 1}, eff)
	require.Equal(t, records.NodeFailed, state(r, "gate"))
	require.Equal(t, "approval timed out after 2s with no decision", r.Nodes[1].Error)
}

func TestBuiltinConfigIsValidated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cfg, path string
	}{
		{"neither", `{}`, "$.nodes[0].config"},
		{"both", `{"duration":"1s","until":"2026-01-01T00:00:00Z"}`, "$.nodes[0].config"},
		{"bad duration", `{"duration":"soon"}`, "$.nodes[0].config.duration"},
		{"bad until", `{"until":"tomorrow"}`, "$.nodes[0].config.until"},
		{"not an object", `"1s"`, "$.nodes[0].config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := dag.Parse([]byte(`{"name":"w","nodes":[{"id":"a","handler":"wait","config":` + tt.cfg + `}]}`))
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.path)
		})
	}
	_, err := dag.Parse([]byte(`{"name":"w","nodes":[{"id":"a","handler":"approval","parallel":3}]}`))
	require.ErrorContains(t, err, "approval nodes cannot fan out")
	_, err = dag.Parse([]byte(`{"name":"w","nodes":[{"id":"a","handler":"approval","config":{"message":3}}]}`))
	require.ErrorContains(t, err, "$.nodes[0].config.message")
	_, err = dag.Parse([]byte(`{"name":"w","nodes":[{"id":"a","handler":"wait","config":{"duration":"<< input.d >>"}}]}`))
	require.NoError(t, err, "a templated duration is checked at run time")
}
