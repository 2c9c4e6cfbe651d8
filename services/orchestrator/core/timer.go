package core

import (
	"fmt"

	"github.com/braidhq/braid/pkg/records"
)

// timer handles a due durable timer. A timer that no longer matches the
// node's current attempt and state is a no-op.
func (r *Run) timer(e Timer, eff *Effects) {
	if e.Kind == TimerRunDeadline {
		r.runDeadline(e.Now, eff)
		return
	}
	i := r.Index(e.Node)
	if i < 0 {
		return
	}
	if r.Nodes[i].FanOut {
		r.instanceTimer(i, e, eff)
		return
	}
	n := &r.Nodes[i]
	if n.Attempt != e.Attempt {
		return
	}
	switch {
	case e.Kind == TimerWake:
		r.wake(i, e.Attempt, e.Now, eff)
	case e.Kind == TimerRetry && n.State == records.NodeRetryWait:
		if !r.dispatching() {
			return // a paused run re-queues on resume
		}
		if !r.queue(i, e.Now, eff) {
			r.evaluate(r.finished(i, e.Now, eff, nil), e.Now, eff)
			r.maybeFinish(e.Now, eff)
		}
	case e.Kind == TimerDeadline && n.State.InFlight() && e.Now >= n.Deadline:
		// A deadline moved later (the attempt was handed back and sent
		// again) leaves its first timer behind: that one is a no-op.
		r.attemptFailed(i, r.timeoutMessage(i), false, e.Now, eff)
	}
}

// runDeadline fails a run that outlived its workflow timeout.
func (r *Run) runDeadline(now int64, eff *Effects) {
	if r.Status.Terminal() {
		return
	}
	msg := fmt.Sprintf("run timed out after %s", r.Plan.Graph.Def.Timeout)
	r.stopAll(records.NodeCancelled, msg, now, eff)
	r.setStatus(records.RunFailed, msg, now, eff)
}

// stopAll moves every unfinished node to state s (cancelled): pending nodes
// never start, in-flight attempts are told to stop through their records.
func (r *Run) stopAll(s records.NodeState, reason string, now int64, eff *Effects) {
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if n.State.Terminal() {
			continue
		}
		if n.FanOut {
			r.stopFan(i, s, reason, now, eff)
		}
		n.Reason, n.FinishedAt, n.Deadline, n.RetryAt = reason, now, 0, 0
		r.transition(i, s, reason, now, eff)
		// Its children count it as finished, as after any end: nothing is
		// decided now (they are stopped too), but their stored tallies stay
		// true for a later retry or rerun.
		r.finished(i, now, eff, nil)
	}
}
