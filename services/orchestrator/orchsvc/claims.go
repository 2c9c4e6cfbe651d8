package orchsvc

import (
	"context"

	"github.com/braidhq/braid/pkg/runstate"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/core"
)

// reconcileEvent gathers the facts a Reconcile of r needs: for every
// attempt a worker may hold (plain nodes and fan-out instances), whether
// its claim is held by a live worker incarnation, by one that is gone, or
// by nobody. Two pipelined round trips (claims, then their holders'
// liveness). If Redis cannot answer, every attempt counts as held, so a
// blip never declares a live worker's attempt lost.
func (s *Service) reconcileEvent(ctx context.Context, r *core.Run, now int64, takeover bool) core.Reconcile {
	ev := core.Reconcile{Now: now, Takeover: takeover, MaxLost: s.cfg.MaxLost,
		Claimed: map[int]bool{}, Instances: map[core.Slot]bool{},
		Orphaned: map[int]runstate.Holder{}, OrphanedInstances: map[core.Slot]runstate.Holder{}}
	nodes, insts := r.InFlight(), r.InFlightInstances()
	atts := make([]statestore.Attempt, 0, len(nodes)+len(insts))
	for _, i := range nodes {
		atts = append(atts, statestore.Attempt{Run: r.ID, Node: r.NodeID(i), Attempt: r.Nodes[i].Attempt})
	}
	for _, a := range insts {
		atts = append(atts, statestore.Attempt{Run: r.ID, Node: r.NodeID(a.Node), Instance: a.Instance, Attempt: a.Attempt})
	}
	facts, err := s.keys.ClaimFacts(ctx, s.rdb, atts)
	if err != nil {
		s.log.Warn("reconcile: claims unreadable; taking every attempt as held", "run_id", r.ID, "err", err)
		facts = make([]statestore.ClaimFact, len(atts))
		for j := range facts {
			facts[j].State = statestore.ClaimLive
		}
	}
	for j, i := range nodes {
		switch facts[j].State {
		case statestore.ClaimLive:
			ev.Claimed[i] = true
		case statestore.ClaimOrphaned:
			ev.Orphaned[i] = facts[j].Holder
		}
	}
	for j, a := range insts {
		switch f := facts[len(nodes)+j]; f.State {
		case statestore.ClaimLive:
			ev.Instances[a.Slot] = true
		case statestore.ClaimOrphaned:
			ev.OrphanedInstances[a.Slot] = f.Holder
		}
	}
	return ev
}

// orphanedClaims lists the claims eff's write deletes if they still hold
// the holder that was found gone.
func orphanedClaims(r *core.Run, eff *core.Effects) []statestore.OrphanedClaim {
	var out []statestore.OrphanedClaim
	for _, o := range eff.Orphans {
		out = append(out, statestore.OrphanedClaim{
			Attempt: statestore.Attempt{Run: r.ID, Node: r.NodeID(o.Node), Instance: o.Instance, Attempt: o.Attempt},
			Holder:  o.Holder,
		})
	}
	return out
}
