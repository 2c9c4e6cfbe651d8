package core

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
)

// Built-in node kinds run by the orchestrator itself: no worker sees them.
// A wait node is running from its start until its wake timer fires; an
// approval node stays queued until an approve or reject control arrives
// (or its timeout fails it).
const (
	HandlerWait     = dag.HandlerWait
	HandlerApproval = dag.HandlerApproval
)

// builtin returns node i's built-in kind, or "" for a worker handler.
func (r *Run) builtin(i int) string {
	switch h := r.Plan.Graph.Def.Nodes[i].Handler; h {
	case HandlerWait, HandlerApproval:
		return h
	}
	return ""
}

// startBuiltin begins the current attempt of built-in node i with its
// resolved config. It reports false when the node failed instead.
func (r *Run) startBuiltin(i int, cfg json.RawMessage, now int64, eff *Effects) bool {
	if r.builtin(i) == HandlerApproval {
		r.transition(i, records.NodeQueued, "awaiting approval", now, eff)
		return true
	}
	wake, err := wakeTime(cfg, now)
	if err != nil {
		r.fail(i, fmt.Sprintf("node %s: %v", r.NodeID(i), err), now, eff)
		return false
	}
	n := &r.Nodes[i]
	n.StartedAt, n.WakeAt = now, wake
	r.transition(i, records.NodeRunning, "waiting until "+time.UnixMilli(wake).UTC().Format(time.RFC3339Nano), now, eff)
	eff.Timers = append(eff.Timers, TimerArm{Kind: TimerWake, Node: r.NodeID(i), Attempt: n.Attempt, At: wake})
	return true
}

// wakeTime reads a wait node's resolved config: `duration` (a Go duration
// such as "90s") or `until` (an RFC 3339 time), exactly one of them.
func wakeTime(cfg json.RawMessage, now int64) (int64, error) {
	var c struct {
		Duration *string `json:"duration"`
		Until    *string `json:"until"`
	}
	if err := json.Unmarshal(cfg, &c); err != nil {
		return 0, fmt.Errorf("wait config must be an object with duration or until: %v", err)
	}
	switch {
	case (c.Duration == nil) == (c.Until == nil):
		return 0, fmt.Errorf("wait config needs exactly one of duration or until")
	case c.Duration != nil:
		d, err := time.ParseDuration(*c.Duration)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("wait duration %q: want a non-negative duration such as \"30s\"", *c.Duration)
		}
		return now + d.Milliseconds(), nil
	default:
		t, err := time.Parse(time.RFC3339Nano, *c.Until)
		if err != nil {
			return 0, fmt.Errorf("wait until %q: want an RFC 3339 time such as \"2026-01-02T15:04:05Z\"", *c.Until)
		}
		return max(t.UnixMilli(), now), nil
	}
}

// wake ends the sleep of wait node i if its attempt is still the one asleep.
func (r *Run) wake(i int, attempt int, now int64, eff *Effects) {
	n := &r.Nodes[i]
	if r.builtin(i) != HandlerWait || n.Attempt != attempt || n.State != records.NodeRunning || now < n.WakeAt {
		return
	}
	out, _ := json.Marshal(map[string]any{
		"waited_ms": now - n.StartedAt,
		"until":     time.UnixMilli(n.WakeAt).UTC().Format(time.RFC3339Nano),
	})
	n.WakeAt = 0
	r.succeed(i, Result{Now: now, Output: out, FinishedAt: now}, eff)
}

// decideApproval applies an approve or reject control to approval node e.Node.
func (r *Run) decideApproval(e Control, eff *Effects) {
	verb := map[ControlAction]string{ControlApprove: "approve", ControlReject: "reject"}[e.Action]
	i := r.Index(e.Node)
	switch {
	case i < 0 || r.builtin(i) != HandlerApproval:
		eff.History = append(eff.History, fmt.Sprintf("%s of %q ignored: not an approval node", verb, e.Node))
		return
	case r.Status.Terminal() || r.Nodes[i].State != records.NodeQueued:
		eff.History = append(eff.History, fmt.Sprintf("%s of node %s ignored: it is %s (run %s)", verb, e.Node, r.Nodes[i].State, r.Status))
		return
	}
	n := &r.Nodes[i]
	n.Worker = e.By
	if n.StartedAt == 0 {
		n.StartedAt = n.QueuedAt
	}
	if e.Action == ControlReject {
		msg := "rejected"
		if e.By != "" {
			msg += " by " + e.By
		}
		if e.Reason != "" {
			msg += ": " + e.Reason
		}
		r.attemptFailed(i, msg, true, e.Now, eff)
		return
	}
	out, _ := json.Marshal(map[string]any{"approved": true, "by": e.By, "comment": e.Reason,
		"at": time.UnixMilli(e.Now).UTC().Format(time.RFC3339Nano)})
	r.succeed(i, Result{Now: e.Now, Output: out, FinishedAt: e.Now}, eff)
}

// repairBuiltin is the reconciler's repair of built-in node i: a wait node
// whose wake timer was lost wakes late. Built-in nodes hold no worker claim,
// so the claim-based repairs never apply to them.
func (r *Run) repairBuiltin(i int, now int64, eff *Effects) {
	n := &r.Nodes[i]
	if r.builtin(i) == HandlerWait && n.State == records.NodeRunning && n.WakeAt > 0 && now >= n.WakeAt {
		eff.History = append(eff.History, fmt.Sprintf("reconciler: overdue wake of wait node %s", r.NodeID(i)))
		r.wake(i, n.Attempt, now, eff)
	}
}

// timeoutMessage says why node i's attempt passed its deadline.
func (r *Run) timeoutMessage(i int) string {
	t := r.Plan.Graph.Def.Nodes[i].Timeout
	switch r.builtin(i) {
	case HandlerApproval:
		return fmt.Sprintf("approval timed out after %s with no decision", t)
	case HandlerWait:
		return fmt.Sprintf("wait timed out after %s", t)
	}
	return fmt.Sprintf("timed out after %s (no result from the worker)", t)
}
