package core

import (
	"fmt"

	"github.com/braidhq/braid/pkg/records"
)

// DefaultMaxLost is how many times one attempt may be lost with its worker
// before the node fails (Reconcile.MaxLost overrides it). A task that kills
// its worker every time must not loop for ever.
const DefaultMaxLost = 3

func (e Reconcile) maxLost() int {
	if e.MaxLost > 0 {
		return e.MaxLost
	}
	return DefaultMaxLost
}

func (e Reconcile) orphaned(i int) bool {
	_, ok := e.Orphaned[i]
	return ok
}

func (e Reconcile) instanceOrphaned(s Slot) bool {
	_, ok := e.OrphanedInstances[s]
	return ok
}

// orphanSeen reports whether eff already declared lost the attempt whose
// claim h holds: two reconciles of one run in one batch (a takeover's and
// a RECONCILE control) read the same claim before the first one's write
// deletes it, and the second must not count the same loss again.
func (eff *Effects) orphanSeen(node, inst, attempt int, h records.Holder) bool {
	for _, o := range eff.Orphans {
		if o.Node == node && o.Instance == inst && o.Attempt == attempt && o.Holder == h.String() {
			return true
		}
	}
	return false
}

// lostWorker names the worker an attempt was lost with: the orphaned
// claim's holder, else the worker that reported it running.
func lostWorker(h records.Holder, orphaned bool, recorded string) string {
	switch {
	case orphaned && h.Worker != "":
		return h.Worker
	case recorded != "":
		return recorded
	}
	return "(unknown)"
}

// lostMessage is what a lost attempt's history and attempt list say.
func lostMessage(worker string) string {
	return fmt.Sprintf("lost: worker %s stopped responding", worker)
}

// lost handles node i's current attempt after its worker died (its claim
// lapsed, or is held by an incarnation that is gone): a crash is the
// system's fault, not the task's, so the same attempt — same number, same
// idempotency key — is dispatched again at once without consuming an
// attempt of the retry policy. Once one attempt has been lost
// Reconcile.MaxLost times the node fails instead, saying so.
func (r *Run) lost(i int, e Reconcile, eff *Effects) {
	n := &r.Nodes[i]
	id := r.NodeID(i)
	h, orphaned := e.Orphaned[i]
	if orphaned && eff.orphanSeen(i, 0, n.Attempt, h) {
		return // facts read before this batch's own repair of the same claim
	}
	worker := lostWorker(h, orphaned, n.Worker)
	if orphaned {
		eff.Orphans = append(eff.Orphans, OrphanClaim{Node: i, Attempt: n.Attempt, Holder: h.String()})
	}
	n.Lost++
	eff.Lost++
	if n.Lost >= e.maxLost() {
		msg := fmt.Sprintf("attempt %d lost %d times (limit %d); last: worker %s stopped responding", n.Attempt, n.Lost, e.maxLost(), worker)
		eff.History = append(eff.History, fmt.Sprintf("reconciler: node %s %s", id, msg))
		r.attemptFailed(i, msg, true, e.Now, eff)
		return
	}
	msg := lostMessage(worker)
	n.EndRun(records.OutcomeLost, msg, e.Now)
	eff.History = append(eff.History, fmt.Sprintf("reconciler: node %s attempt %d %s (loss %d of %d); dispatched again",
		id, n.Attempt, msg, n.Lost, e.maxLost()))
	// Sent again even in a paused run: the attempt had started before.
	r.redo(i, msg, e.Now, eff)
	if !n.State.InFlight() { // its config no longer resolves: failed
		r.evaluate(r.finished(i, e.Now, eff, nil), e.Now, eff)
	}
}

// instanceLost is lost for instance idx of fan-out node i.
func (r *Run) instanceLost(i, idx int, e Reconcile, eff *Effects) {
	rec := r.fans[i].insts[idx]
	id := r.NodeID(i)
	slot := Slot{Node: i, Instance: idx}
	h, orphaned := e.OrphanedInstances[slot]
	if orphaned && eff.orphanSeen(i, idx, rec.Attempt, h) {
		return
	}
	worker := lostWorker(h, orphaned, rec.Worker)
	if orphaned {
		eff.Orphans = append(eff.Orphans, OrphanClaim{Node: i, Instance: idx, FanOut: true, Attempt: rec.Attempt, Holder: h.String()})
	}
	rec.Lost++
	eff.Lost++
	if rec.Lost >= e.maxLost() {
		msg := fmt.Sprintf("attempt %d lost %d times (limit %d); last: worker %s stopped responding", rec.Attempt, rec.Lost, e.maxLost(), worker)
		eff.History = append(eff.History, fmt.Sprintf("reconciler: node %s instance %d %s", id, idx, msg))
		r.instanceAttemptFailed(i, idx, msg, true, e.Now, eff)
		return // repairFan advances the node
	}
	msg := lostMessage(worker)
	rec.EndRun(records.OutcomeLost, msg, e.Now)
	eff.History = append(eff.History, fmt.Sprintf("reconciler: node %s instance %d attempt %d %s (loss %d of %d); dispatched again",
		id, idx, rec.Attempt, msg, rec.Lost, e.maxLost()))
	r.instanceRedo(i, idx, msg, e.Now, eff)
}
