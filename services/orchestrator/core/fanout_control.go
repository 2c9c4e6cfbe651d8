package core

import (
	"fmt"
	"maps"
	"slices"

	"github.com/braidhq/braid/pkg/records"
)

// unfinishedInstances lists, sorted, the started instances of node i that
// are not terminal (active, or pending after a retry).
func (r *Run) unfinishedInstances(i int) []int {
	f := r.fans[i]
	if f == nil {
		return nil
	}
	var out []int
	for _, idx := range slices.Sorted(maps.Keys(f.insts)) {
		if !f.insts[idx].State.Terminal() {
			out = append(out, idx)
		}
	}
	return out
}

// stopFan moves every unfinished instance of node i to state s (cancelled):
// workers holding them see it in their next heartbeat and stop.
func (r *Run) stopFan(i int, s records.NodeState, reason string, now int64, eff *Effects) {
	for _, idx := range r.unfinishedInstances(i) {
		rec := r.fans[i].insts[idx]
		rec.Reason, rec.FinishedAt, rec.Deadline, rec.RetryAt = reason, now, 0, 0
		r.instTransition(i, idx, s, reason, now, eff)
	}
	if f := r.fans[i]; f != nil {
		f.retry = nil
	}
}

// resetFan prepares fan-out node i for a retry or a rerun. keep (a retry of
// the node's own failure) keeps succeeded instances and their outputs and
// returns failed and cancelled ones to pending; otherwise every instance and
// the stored items go. It returns the tallies the node record keeps.
func (r *Run) resetFan(i int, keep bool, now int64, eff *Effects) records.FanOutCounts {
	f := r.fans[i]
	if !keep || f == nil || !r.Nodes[i].FanOut {
		// Every instance starts afresh: the next launch numbers its
		// attempts on from the highest any instance reached, so no
		// (instance, attempt) — idempotency key, claim, log — repeats.
		high := r.Nodes[i].InstanceHigh
		if f != nil {
			for _, rec := range f.insts {
				high = max(high, rec.Attempt)
			}
		}
		delete(r.fans, i)
		if r.Nodes[i].FanOut {
			eff.FanOut.reset(i)
		}
		return records.FanOutCounts{InstanceBase: high, InstanceHigh: high}
	}
	for _, idx := range slices.Sorted(maps.Keys(f.insts)) {
		rec := f.insts[idx]
		if rec.State == records.NodeFailed || rec.State == records.NodeCancelled {
			rec.Error, rec.Reason, rec.FinishedAt, rec.AttemptBase = "", "", 0, rec.Attempt
			r.instTransition(i, idx, records.NodePending, "retry", now, eff)
			f.retry = append(f.retry, idx)
		}
	}
	c := r.Nodes[i].FanOutCounts
	c.Active, c.Failed, c.Cancelled = 0, 0, 0
	return c
}

// resumeFan re-queues node i's instances whose retry came due while the run
// was paused and starts more; it reports whether the node finished.
func (r *Run) resumeFan(i int, now int64, eff *Effects) bool {
	for _, idx := range r.unfinishedInstances(i) {
		rec := r.fans[i].insts[idx]
		if rec.State == records.NodeRetryWait && rec.RetryAt <= now {
			r.startInstance(i, idx, now, eff)
		}
	}
	return r.fanAdvance(i, now, eff)
}

// repairFan is the reconciler's pass over fan-out node i's instances: missed
// deadlines, lost workers, lost dispatches and overdue retries. It reports
// whether the node finished.
func (r *Run) repairFan(i int, e Reconcile, eff *Effects) bool {
	if r.fans[i] == nil {
		return false
	}
	id := r.NodeID(i)
	for _, idx := range r.unfinishedInstances(i) {
		rec := r.fans[i].insts[idx]
		slot := Slot{Node: i, Instance: idx}
		switch {
		case rec.State.InFlight() && rec.Deadline > 0 && e.Now >= rec.Deadline:
			eff.History = append(eff.History, fmt.Sprintf("reconciler: node %s instance %d attempt %d passed its deadline", id, idx, rec.Attempt))
			r.instanceAttemptFailed(i, idx, fmt.Sprintf("timed out after %s (no result from the worker)", r.Plan.Graph.Def.Nodes[i].Timeout), false, e.Now, eff)
		case rec.State == records.NodeRunning && !e.Instances[slot], rec.State == records.NodeQueued && e.instanceOrphaned(slot):
			r.instanceLost(i, idx, e, eff)
		case rec.State == records.NodeQueued && e.redispatchDue(rec.QueuedAt, e.Instances[slot]) && r.dispatching() && e.offered(r.Plan.Graph.Def.Nodes[i].Handler):
			eff.History = append(eff.History, fmt.Sprintf("reconciler: re-dispatched unclaimed node %s instance %d attempt %d%s", id, idx, rec.Attempt, e.redispatchNote()))
			r.redispatchInstance(i, idx, e.Now, eff)
		case rec.State == records.NodeRetryWait && e.Now >= rec.RetryAt && r.dispatching():
			eff.History = append(eff.History, fmt.Sprintf("reconciler: overdue retry of node %s instance %d", id, idx))
			r.startInstance(i, idx, e.Now, eff)
		}
	}
	return r.fanAdvance(i, e.Now, eff)
}

// redispatchInstance sends instance idx's current attempt again, unchanged.
func (r *Run) redispatchInstance(i, idx int, now int64, eff *Effects) {
	cfg, err := r.instanceConfig(i, idx)
	if err != nil {
		r.instanceFailed(i, idx, err.Error(), now, eff)
		return
	}
	rec := r.fans[i].insts[idx]
	rec.QueuedAt = now
	eff.FanOut.setInstance(Slot{Node: i, Instance: idx}, *rec)
	eff.Dispatches = append(eff.Dispatches, r.instanceDispatch(i, idx, cfg))
}

// InstanceAttempt names the current attempt of one fan-out instance.
type InstanceAttempt struct {
	Slot
	Attempt int
}

// InFlightInstances lists the fan-out instance attempts a worker may hold,
// so the shell can look up their claims before a Reconcile.
func (r *Run) InFlightInstances() []InstanceAttempt {
	var out []InstanceAttempt
	for _, i := range slices.Sorted(maps.Keys(r.fans)) {
		for _, idx := range r.unfinishedInstances(i) {
			if rec := r.fans[i].insts[idx]; rec.State.InFlight() {
				out = append(out, InstanceAttempt{Slot: Slot{Node: i, Instance: idx}, Attempt: rec.Attempt})
			}
		}
	}
	return out
}
