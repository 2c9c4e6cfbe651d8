package core

import (
	"fmt"

	"github.com/braidhq/braid/pkg/records"
)

// control applies a user's request.
func (r *Run) control(e Control, eff *Effects) {
	switch e.Action {
	case ControlCancel:
		r.cancel(e, eff)
	case ControlPause:
		r.pause(true, e.Now, eff)
	case ControlResume:
		r.pause(false, e.Now, eff)
	case ControlApprove, ControlReject:
		r.decideApproval(e, eff)
	case ControlRetry:
		nodes, own := r.retryable()
		r.reset(nodes, own, "retry", e, eff)
	case ControlRerunFrom:
		i := r.Index(e.Node)
		if i < 0 {
			eff.History = append(eff.History, fmt.Sprintf("rerun from unknown node %q ignored", e.Node))
			return
		}
		r.reset(r.Plan.Graph.Downstream(i), nil, "rerun from "+e.Node, e, eff)
	}
}

// cancel stops the run: nothing new starts, in-flight attempts are told to
// stop (their records turn cancelled, which their workers' heartbeats see).
func (r *Run) cancel(e Control, eff *Effects) {
	if r.Status.Terminal() {
		eff.History = append(eff.History, "cancel of a finished run ignored")
		return
	}
	reason := "cancelled"
	if e.Reason != "" {
		reason = "cancelled: " + e.Reason
	}
	r.stopAll(records.NodeCancelled, reason, e.Now, eff)
	r.setStatus(records.RunCancelled, reason, e.Now, eff)
}

// pause stops or resumes new dispatches; running attempts finish either way.
func (r *Run) pause(paused bool, now int64, eff *Effects) {
	if r.Paused == paused || r.Status.Terminal() {
		return
	}
	r.Paused = paused
	eff.RunChanged = true
	if paused {
		return
	}
	var work []int
	for i, n := range r.Nodes {
		switch {
		case n.State == records.NodePending:
			work = append(work, i)
		case n.FanOut && n.State == records.NodeRunning:
			if r.resumeFan(i, now, eff) {
				work = r.finished(i, now, eff, work)
			}
		case n.State == records.NodeRetryWait && n.RetryAt <= now:
			if !r.queue(i, now, eff) {
				work = r.finished(i, now, eff, work)
			}
		}
	}
	r.evaluate(work, now, eff)
	r.maybeFinish(now, eff)
}

// retryable lists failed, cancelled and skipped nodes, and everything
// downstream of them, in topological order. own marks the nodes retried for
// their own failure with no retried ancestor: a fan-out node among them
// keeps its succeeded instances.
func (r *Run) retryable() (out []int, own map[int]bool) {
	g := r.Plan.Graph
	mark := make([]bool, len(r.Nodes))
	own = map[int]bool{}
	for _, i := range g.Order {
		s := r.Nodes[i].State
		inherited := false
		for _, p := range g.Parents[i] {
			inherited = inherited || mark[p]
		}
		if s == records.NodeFailed || s == records.NodeCancelled || s == records.NodeSkipped && !r.Nodes[i].WhenSkipped {
			mark[i] = true
			own[i] = !inherited
		}
		mark[i] = mark[i] || inherited
		if mark[i] {
			out = append(out, i)
		}
	}
	return out, own
}

// reset returns the given nodes to pending (dropping their outputs; a
// fan-out node in keepInstances keeps its succeeded instances), rebuilds
// the parent counters, and continues the run.
func (r *Run) reset(nodes []int, keepInstances map[int]bool, why string, e Control, eff *Effects) {
	now := e.Now
	if !r.Status.Terminal() && len(nodes) > 0 {
		eff.History = append(eff.History, why+" of an unfinished run ignored")
		return
	}
	if len(nodes) == 0 {
		eff.History = append(eff.History, why+": nothing to re-run")
		return
	}
	for _, i := range nodes {
		n := &r.Nodes[i]
		fc := r.resetFan(i, keepInstances[i], now, eff)
		if n.State != records.NodePending {
			n.EndRun(records.OutcomeReset, n.Error, now)
		}
		*n = records.NodeRecord{State: n.State, Attempt: n.Attempt, AttemptBase: n.Attempt, Past: n.Past, FanOutCounts: fc}
		r.transition(i, records.NodePending, why, now, eff)
		if r.Outputs[i] != nil {
			r.Outputs[i] = nil
			eff.ClearedOutputs = append(eff.ClearedOutputs, i)
		}
	}
	g := r.Plan.Graph
	for _, i := range nodes {
		left := 0
		for _, p := range g.Parents[i] {
			if !r.Nodes[p].State.Terminal() {
				left++
			}
		}
		r.Nodes[i].ParentsLeft = left
	}
	r.recount()
	r.Error, r.FinishedAt = "", 0
	if e.NoSlot {
		// Reopened, but its workflow's concurrency cap is reached: it waits
		// like a new run, and Admit starts it (begin evaluates the reset nodes).
		r.setStatus(records.RunPending, "", now, eff)
		r.Held = true
		eff.History = append(eff.History, why+": waiting for a workflow concurrency slot")
		return
	}
	r.setStatus(records.RunRunning, "", now, eff)
	r.evaluate(append([]int(nil), nodes...), now, eff)
	r.maybeFinish(now, eff)
}
