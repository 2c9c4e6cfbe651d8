package core

import (
	"fmt"

	"github.com/braidhq/braid/pkg/records"
)

// handBack dispatches node i's current attempt again, unchanged (same
// attempt number and idempotency key), after its worker gave it back
// unfinished while shutting down: a graceful stop is not a failure and
// costs no attempt. The worker released its claim first, so another worker
// can claim the dispatch. The attempt's deadline starts over.
func (r *Run) handBack(i int, e Result, eff *Effects) {
	n := &r.Nodes[i]
	eff.History = append(eff.History, fmt.Sprintf("node %s attempt %d handed back by worker %s (shutting down); dispatched again",
		r.NodeID(i), n.Attempt, e.Worker))
	n.EndRun(records.OutcomeHandedBack, "handed back by worker "+e.Worker+" (shutting down)", e.Now)
	r.redo(i, "handed back by worker "+e.Worker, e.Now, eff)
	if !n.State.InFlight() {
		r.evaluate(r.finished(i, e.Now, eff, nil), e.Now, eff)
		r.maybeFinish(e.Now, eff)
	}
}

// redo queues node i's current attempt again, unchanged, with a fresh
// deadline, and dispatches it; detail goes on the transition. A config
// that no longer resolves fails the node (the caller then evaluates what
// follows from it).
func (r *Run) redo(i int, detail string, now int64, eff *Effects) {
	n := &r.Nodes[i]
	node := r.Plan.Graph.Def.Nodes[i]
	cfg, err := r.resolveConfig(i)
	if err != nil {
		r.fail(i, err.Error(), now, eff)
		return
	}
	n.QueuedAt, n.StartedAt, n.Worker, n.Deadline = now, 0, "", 0
	if node.Timeout > 0 {
		n.Deadline = now + ms(node.Timeout) + DeadlineGrace.Milliseconds()
		eff.Timers = append(eff.Timers, TimerArm{Kind: TimerDeadline, Node: node.ID, Attempt: n.Attempt, At: n.Deadline})
	}
	r.transition(i, records.NodeQueued, detail, now, eff)
	eff.Dispatches = append(eff.Dispatches, r.dispatchOf(i, cfg))
}

// instanceHandBack is handBack for instance idx of fan-out node i.
func (r *Run) instanceHandBack(i, idx int, e Result, eff *Effects) {
	rec := r.fans[i].insts[idx]
	eff.History = append(eff.History, fmt.Sprintf("node %s instance %d attempt %d handed back by worker %s (shutting down); dispatched again",
		r.NodeID(i), idx, rec.Attempt, e.Worker))
	rec.EndRun(records.OutcomeHandedBack, "handed back by worker "+e.Worker+" (shutting down)", e.Now)
	r.instanceRedo(i, idx, "handed back by worker "+e.Worker, e.Now, eff)
	if rec.State.Terminal() && r.fanAdvance(i, e.Now, eff) {
		r.nodeDone(i, e.Now, eff)
	}
}

// instanceRedo is redo for instance idx of fan-out node i. An instance
// whose config no longer resolves fails (the caller advances the node).
func (r *Run) instanceRedo(i, idx int, detail string, now int64, eff *Effects) {
	rec := r.fans[i].insts[idx]
	node := r.Plan.Graph.Def.Nodes[i]
	cfg, err := r.instanceConfig(i, idx)
	if err != nil {
		r.instanceFailed(i, idx, err.Error(), now, eff)
		return
	}
	rec.QueuedAt, rec.StartedAt, rec.Worker, rec.Deadline = now, 0, "", 0
	if node.Timeout > 0 {
		rec.Deadline = now + ms(node.Timeout) + DeadlineGrace.Milliseconds()
		eff.Timers = append(eff.Timers, TimerArm{Kind: TimerDeadline, Node: node.ID, Instance: idx, Attempt: rec.Attempt, At: rec.Deadline})
	}
	r.instTransition(i, idx, records.NodeQueued, detail, now, eff)
	eff.Dispatches = append(eff.Dispatches, r.instanceDispatch(i, idx, cfg))
}
