package core

import (
	"fmt"

	"github.com/braidhq/braid/pkg/records"
)

// Apply handles one event, mutating r and appending what must follow to eff.
// Handling the same event twice leaves the same state: results for attempts
// that are not current and timers that no longer match are recorded in
// eff.History and otherwise ignored.
func (r *Run) Apply(ev Event, eff *Effects) {
	switch e := ev.(type) {
	case Start:
		r.start(e, eff)
	case Result:
		r.result(e, eff)
	case Timer:
		r.timer(e, eff)
	case Control:
		r.control(e, eff)
	case Reconcile:
		r.reconcile(e, eff)
	case Admit:
		r.admit(e, eff)
	}
}

func (r *Run) start(e Start, eff *Effects) {
	if r.Status != records.RunPending || r.Held {
		eff.History = append(eff.History, "duplicate start ignored")
		return
	}
	if e.NoSlot && r.Plan.Graph.Def.Concurrency > 0 {
		r.Hold(e.Now, eff)
		return
	}
	eff.Created = true
	r.begin(e.Now, eff)
	// Only the records begin changed are written: a node never touched
	// since NewRun has no record, and a missing record reads as NewRun's
	// (InitialRecord). A run with records is a started run (the api tells
	// a pending run by its empty nodes hash), so at least one is written.
	if len(eff.Nodes) == 0 {
		for i := range r.Nodes {
			r.touch(i, eff)
		}
	}
}

// Hold records a new run without starting it: its workflow's concurrency
// cap is reached, so it waits (pending) until Admit.
func (r *Run) Hold(now int64, eff *Effects) {
	if r.Status != records.RunPending || r.Held {
		return
	}
	eff.Created, eff.RunChanged, r.Held = true, true, true
	for i := range r.Nodes {
		r.touch(i, eff)
	}
	eff.History = append(eff.History, "waiting for a workflow concurrency slot")
}

// admit starts a held run once it got its workflow concurrency slot.
func (r *Run) admit(e Admit, eff *Effects) {
	if r.Status != records.RunPending || !r.Held {
		return
	}
	r.Held = false
	r.begin(e.Now, eff)
}

// begin moves a recorded run to running and evaluates its root nodes.
func (r *Run) begin(now int64, eff *Effects) {
	e := Start{Now: now}
	r.setStatus(records.RunRunning, "", e.Now, eff)
	r.StartedAt = e.Now
	if t := r.Plan.Graph.Def.Timeout; t > 0 {
		eff.Timers = append(eff.Timers, TimerArm{Kind: TimerRunDeadline, At: e.Now + ms(t)})
	}
	var ready []int
	for i, n := range r.Nodes {
		if n.ParentsLeft == 0 && n.State == records.NodePending {
			ready = append(ready, i)
		}
	}
	r.evaluate(ready, e.Now, eff)
	r.maybeFinish(e.Now, eff)
}

// setStatus changes the run status and records the change.
func (r *Run) setStatus(s records.RunStatus, detail string, now int64, eff *Effects) {
	if r.Status == s {
		return
	}
	r.Status = s
	eff.RunChanged, eff.rChange = true, true
	eff.Started = eff.Started || s == records.RunRunning
	if s.Terminal() {
		r.FinishedAt = now
		r.Error = detail
		r.Held = false // an ended run holds no queue place (a retry must not stay held)
	}
}

// touch marks node i changed.
func (r *Run) touch(i int, eff *Effects) { eff.touch(i) }

// transition moves node i to state s and records the change.
func (r *Run) transition(i int, s records.NodeState, detail string, now int64, eff *Effects) {
	n := &r.Nodes[i]
	wasTerminal := n.State.Terminal()
	if n.State == records.NodeFailed {
		r.failed--
	}
	n.State = s
	if s == records.NodeFailed {
		r.failed++
	}
	switch {
	case s.Terminal() && !wasTerminal:
		r.unfinished--
	case !s.Terminal() && wasTerminal:
		r.unfinished++
	}
	r.touch(i, eff)
	eff.Changes = append(eff.Changes, Change{Node: i, Attempt: n.Attempt, State: s, Detail: detail, Worker: n.Worker, At: now})
}

// maybeFinish ends the run when no node can make progress.
func (r *Run) maybeFinish(now int64, eff *Effects) {
	if r.unfinished > 0 || r.Status.Terminal() {
		return
	}
	switch {
	case r.Status == records.RunCancelling:
		r.setStatus(records.RunCancelled, "cancelled", now, eff)
	case r.failed > 0:
		r.setStatus(records.RunFailed, r.failureSummary(), now, eff)
	default:
		r.setStatus(records.RunSucceeded, "", now, eff)
	}
}

func (r *Run) failureSummary() string {
	for i, n := range r.Nodes {
		if n.State == records.NodeFailed {
			if r.failed == 1 {
				return fmt.Sprintf("node %s failed: %s", r.NodeID(i), n.Error)
			}
			return fmt.Sprintf("%d nodes failed; first: node %s: %s", r.failed, r.NodeID(i), n.Error)
		}
	}
	return ""
}

// Reject records a run whose start was refused (its input did not match the
// workflow's inputs): every node is cancelled and the run fails with msg.
func (r *Run) Reject(msg string, now int64, eff *Effects) {
	eff.Created = true
	r.Status = records.RunRunning
	r.stopAll(records.NodeCancelled, "run rejected", now, eff)
	r.setStatus(records.RunFailed, msg, now, eff)
}
