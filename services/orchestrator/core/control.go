package core

import (
	"fmt"

	"github.com/braidhq/braid/pkg/runstate"
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
		r.reset(r.retryable(), "retry", e.Now, eff)
	case ControlRerunFrom:
		i := r.Index(e.Node)
		if i < 0 {
			eff.History = append(eff.History, fmt.Sprintf("rerun from unknown node %q ignored", e.Node))
			return
		}
		r.reset(r.Plan.Graph.Downstream(i), "rerun from "+e.Node, e.Now, eff)
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
	r.stopAll(runstate.NodeCancelled, reason, e.Now, eff)
	r.setStatus(runstate.RunCancelled, reason, e.Now, eff)
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
		case n.State == runstate.NodePending:
			work = append(work, i)
		case n.State == runstate.NodeRetryWait && n.RetryAt <= now:
			if !r.queue(i, now, eff) {
				work = r.finished(i, now, eff, work)
			}
		}
	}
	r.evaluate(work, now, eff)
	r.maybeFinish(now, eff)
}

// retryable lists failed, cancelled and skipped nodes, and everything
// downstream of them, in topological order.
func (r *Run) retryable() []int {
	g := r.Plan.Graph
	mark := make([]bool, len(r.Nodes))
	var out []int
	for _, i := range g.Order {
		s := r.Nodes[i].State
		if s == runstate.NodeFailed || s == runstate.NodeCancelled || s == runstate.NodeSkipped && !r.Nodes[i].WhenSkipped {
			mark[i] = true
		}
		for _, p := range g.Parents[i] {
			if mark[p] {
				mark[i] = true
			}
		}
		if mark[i] {
			out = append(out, i)
		}
	}
	return out
}

// reset returns the given nodes to pending (dropping their outputs), rebuilds
// the parent counters, and continues the run.
func (r *Run) reset(nodes []int, why string, now int64, eff *Effects) {
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
		*n = runstate.NodeRecord{State: n.State, Attempt: n.Attempt}
		r.transition(i, runstate.NodePending, why, now, eff)
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
	r.setStatus(runstate.RunRunning, "", now, eff)
	r.evaluate(append([]int(nil), nodes...), now, eff)
	r.maybeFinish(now, eff)
}
