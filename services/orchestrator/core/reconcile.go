package core

import (
	"fmt"
	"time"

	"github.com/braidhq/braid/pkg/records"
)

// RedispatchAfter is how long a queued attempt may go unclaimed before the
// reconciler sends its dispatch again (the first one may have been lost when
// an orchestrator died between storing state and publishing). A dispatch
// that is merely waiting in a long backlog gets at most one duplicate per
// interval, which its claim then drops.
const RedispatchAfter = 30 * time.Second

// Reconcile asks the core to re-examine a run against facts the shell
// gathered: which in-flight attempts still hold a live worker claim (the
// claim key doubles as the heartbeat; it expires when heartbeats stop).
type Reconcile struct {
	Now int64
	// Claimed[i] reports whether node i's current attempt has a live claim:
	// one held by a worker incarnation that is still alive. Only in-flight
	// nodes are consulted.
	Claimed map[int]bool
	// Instances reports the same for fan-out instances (see InFlightInstances).
	Instances map[Slot]bool
	// Orphaned names the in-flight attempts whose claim is still stored but
	// held by a worker incarnation that is gone (it restarted under the same
	// id, or stopped renewing its liveness): their worker will never report.
	// The value is the claim's holder; the write that declares the attempt
	// lost deletes the claim if it still holds that value.
	Orphaned map[int]records.Holder
	// OrphanedInstances is Orphaned for fan-out instances.
	OrphanedInstances map[Slot]records.Holder
	// MaxLost is how many times one attempt may be lost before the node
	// fails; 0 means DefaultMaxLost.
	MaxLost int
	// Takeover says the shell just took the run over from another holder
	// (or from its own killed predecessor): queued attempts without a live
	// claim may have had their dispatch lost with that holder, between
	// storing state and publishing, so they are sent again now instead of
	// after RedispatchAfter. A dispatch that was not lost reaches a worker
	// twice, and the claim drops the second.
	Takeover bool
	// Slot says a held run was granted its workflow concurrency slot: it
	// starts (as on Admit) before anything else is examined.
	Slot bool
	// Offered, when set, tells whether a live worker offers a handler. An
	// unclaimed attempt of a handler nobody offers is not sent again: no
	// worker could claim it, the dispatch already sent waits in the topic
	// for the pool that will (a new pool reads it from the start), and a
	// re-send every RedispatchAfter would only fill the run's history. Once
	// a worker offers the handler, the next pass re-sends it as usual (in
	// case the first dispatch was lost). Nil: every handler counts as
	// offered (the registry could not be read).
	Offered func(handler string) bool
}

// offered reports whether e counts a live worker offering handler.
func (e Reconcile) offered(handler string) bool { return e.Offered == nil || e.Offered(handler) }

// redispatchDue reports whether a queued attempt queued at queuedAt and
// claimed by no worker is sent again by e.
func (e Reconcile) redispatchDue(queuedAt int64, claimed bool) bool {
	return !claimed && (e.Takeover || e.Now-queuedAt >= RedispatchAfter.Milliseconds())
}

// redispatchNote is the history line's ending for a re-dispatch by e.
func (e Reconcile) redispatchNote() string {
	if e.Takeover {
		return " (run taken over)"
	}
	return ""
}

func (e Reconcile) at() int64 { return e.Now }

// reconcile repairs what lost messages, lost timers or dead workers left
// behind. Every repair is recorded in the run's history.
func (r *Run) reconcile(e Reconcile, eff *Effects) {
	if r.Held && e.Slot {
		r.admit(Admit{Now: e.Now}, eff)
	}
	if r.Status.Terminal() || r.Held {
		return // a held run has not started: no deadline runs, nothing to repair
	}
	if t := r.Plan.Graph.Def.Timeout; t > 0 && e.Now >= r.StartedAt+ms(t) {
		r.runDeadline(e.Now, eff)
		return
	}
	var work []int
	for i := range r.Nodes {
		work = r.repair(i, e, eff, work)
	}
	r.evaluate(work, e.Now, eff)
	r.maybeFinish(e.Now, eff)
}

// repair examines node i and returns work extended with nodes to evaluate.
func (r *Run) repair(i int, e Reconcile, eff *Effects, work []int) []int {
	n := &r.Nodes[i]
	id := r.NodeID(i)
	if n.FanOut {
		if n.State == records.NodeRunning && r.repairFan(i, e, eff) {
			work = r.finished(i, e.Now, eff, work)
		}
		return work
	}
	switch {
	case n.State.InFlight() && n.Deadline > 0 && e.Now >= n.Deadline:
		eff.History = append(eff.History, fmt.Sprintf("reconciler: node %s attempt %d passed its deadline", id, n.Attempt))
		r.attemptFailed(i, r.timeoutMessage(i), false, e.Now, eff)
	case r.builtin(i) != "" && n.State.InFlight():
		r.repairBuiltin(i, e.Now, eff)
	case n.State == records.NodeRunning && !e.Claimed[i], n.State == records.NodeQueued && e.orphaned(i):
		r.lost(i, e, eff)
	case n.State == records.NodeQueued && e.redispatchDue(n.QueuedAt, e.Claimed[i]) && r.dispatching() && e.offered(r.Plan.Graph.Def.Nodes[i].Handler):
		eff.History = append(eff.History, fmt.Sprintf("reconciler: re-dispatched unclaimed node %s attempt %d%s", id, n.Attempt, e.redispatchNote()))
		r.redispatch(i, e.Now, eff)
	case n.State == records.NodeRetryWait && e.Now >= n.RetryAt && r.dispatching():
		eff.History = append(eff.History, fmt.Sprintf("reconciler: overdue retry of node %s", id))
		if !r.queue(i, e.Now, eff) {
			work = r.finished(i, e.Now, eff, work)
		}
	case n.State == records.NodePending:
		work = append(work, i)
	}
	return work
}

// redispatch sends node i's current attempt again, unchanged: a worker that
// already holds its claim drops the duplicate.
func (r *Run) redispatch(i int, now int64, eff *Effects) {
	cfg, err := r.resolveConfig(i)
	if err != nil {
		r.fail(i, err.Error(), now, eff)
		r.evaluate(r.finished(i, now, eff, nil), now, eff)
		return
	}
	r.Nodes[i].QueuedAt = now
	r.touch(i, eff)
	eff.Dispatches = append(eff.Dispatches, r.dispatchOf(i, cfg))
}

// Busy reports whether a worker may hold one of r's attempts (a node or a
// fan-out instance queued or running, as InFlight and InFlightInstances
// list them) or r waits for a concurrency slot: what keeps a run in the
// busy-runs index, which the reconciler walks often. A run that waits
// only on an approval, a wait node or a retry's timer is not busy.
func (r *Run) Busy() bool {
	if r.Held {
		return true
	}
	for i := range r.Nodes {
		if r.workerMayHold(i) {
			return true
		}
	}
	for _, f := range r.fans {
		for _, rec := range f.insts {
			if rec.State.InFlight() {
				return true
			}
		}
	}
	return false
}

// InFlight lists the positions of nodes whose attempt a worker may hold, so
// the shell can look up their claims before a Reconcile.
func (r *Run) InFlight() []int {
	var out []int
	for i := range r.Nodes {
		if r.workerMayHold(i) {
			out = append(out, i)
		}
	}
	return out
}

// workerMayHold reports whether node i's current attempt is one a worker
// may hold: queued or running, neither a fan-out node (its instances are
// the attempts) nor a built-in the orchestrator runs itself.
func (r *Run) workerMayHold(i int) bool {
	n := r.Nodes[i]
	return n.State.InFlight() && !n.FanOut && r.builtin(i) == ""
}
