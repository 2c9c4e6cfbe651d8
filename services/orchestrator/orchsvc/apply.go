package orchsvc

import (
	"fmt"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/core"
)

// apply runs g's events through the core with the facts gather read for
// them. It does no I/O: what it decides lands in g.eff (state to write,
// dispatches and run events to publish) and g.out (other messages).
func (s *Service) apply(g *runBatch, now int64) {
	g.eff, g.out, g.cmd, g.start, g.spans = &core.Effects{}, nil, nil, nil, nil
	g.dropActive, g.admitted, g.reopened = false, false, false
	if r := g.o.run; g.o.takenOver {
		// Taken over: attempts queued by the previous holder whose
		// dispatch nobody claimed are sent again at once, and the rest of
		// the reconciler's repairs run as on its periodic pass, before the
		// batch's own events.
		g.o.takenOver = false
		if r != nil && !r.Status.Terminal() && !r.Held {
			r.Apply(s.reconcileEvent(g, now, true), g.eff)
		}
	}
	for _, in := range g.events {
		switch {
		case g.o.run != nil:
			s.applyEvent(g, in)
		case in.reconcile:
			s.recoverPending(g, in.ev.(core.Reconcile).Now)
		case in.start != nil:
			s.begin(g, in)
		default:
			g.out = append(g.out, s.deadLetter(in.msg, errUnknownRun))
		}
	}
}

// begin creates the run from its start request; the core rejects, holds
// or starts it.
func (s *Service) begin(g *runBatch, in inbound) {
	st, start := in.start, in.ev.(core.Start)
	start.NoSlot = !g.facts.slot
	r, err := core.Begin(st.RunId, int(st.Version), in.plan, st.Input, createdAt(in), start, g.eff)
	if err != nil {
		s.log.WarnContext(g.logCtx(), "run input rejected", logkey.RunID, g.run, logkey.Err, err)
	}
	g.o.run = r
	g.admitted = workflowCap(r) > 0 && r.Status == records.RunRunning
}

// createdAt is a start's creation time: the api's clock, as in the pending
// record and the run indexes, when the request carries it.
func createdAt(in inbound) int64 {
	if in.start.RequestedAtMs > 0 {
		return in.start.RequestedAtMs
	}
	return in.ev.(core.Start).Now
}

// applyEvent applies one event to a run that exists, completing it with
// its facts first: a result's stored output, a reopening's slot, a
// reconcile's claims.
func (s *Service) applyEvent(g *runBatch, in inbound) {
	r := g.o.run
	ev := in.ev
	switch e := ev.(type) {
	case core.Result:
		if in.ref != "" {
			ev = withOutput(e, in.ref, g.facts)
		}
	case core.Control:
		if reopens(e, r) {
			e.NoSlot = !g.facts.slot
			g.admitted, g.reopened = g.facts.slot, g.facts.slot
			ev = e
		}
	case core.Reconcile:
		if r.Status.Terminal() {
			g.dropActive = true
			return
		}
		ev = s.reconcileEvent(g, e.Now, false)
	}
	lost, held := g.eff.Lost, r.Held
	r.Apply(ev, g.eff)
	s.LostAttempts.Add(int64(g.eff.Lost - lost))
	if held && r.Status == records.RunRunning {
		g.admitted = true // a held run got its slot: nudge the next ones
	}
}

// withOutput replaces a result's output reference by the output gather
// read, or fails the attempt (retryably) when the reference is gone.
func withOutput(res core.Result, ref string, f facts) core.Result {
	b, err := f.outputs[ref].Bytes()
	if err != nil {
		res.Status, res.Error, res.Permanent = core.ResultFailed, fmt.Sprintf("output reference %s unreadable: %v", ref, err), false
		return res
	}
	res.Output = b
	return res
}

// reconcileEvent is the Reconcile of g's run at now from the claims gather
// read: for every attempt a worker may hold, whether its claim is held by
// a live worker incarnation, by one that is gone, or by nobody. An attempt
// whose claim was not read (it entered flight in this batch, after the
// read) counts as held: an unread claim never declares a worker's attempt
// lost.
func (s *Service) reconcileEvent(g *runBatch, now int64, takeover bool) core.Reconcile {
	r := g.o.run
	ev := core.Reconcile{Now: now, Takeover: takeover, MaxLost: s.cfg.MaxLost, Slot: r.Held && g.facts.slot, Offered: g.facts.offered,
		Claimed: map[int]bool{}, Instances: map[core.Slot]bool{},
		Orphaned: map[int]records.Holder{}, OrphanedInstances: map[core.Slot]records.Holder{}}
	read := map[statestore.Attempt]statestore.ClaimFact{}
	if c := g.facts.claims; c != nil {
		for i, a := range c.Attempts {
			read[a] = c.Facts[i]
		}
	}
	fact := func(a statestore.Attempt) statestore.ClaimFact {
		if f, ok := read[a]; ok {
			return f
		}
		return statestore.ClaimFact{State: statestore.ClaimLive}
	}
	for _, i := range r.InFlight() {
		switch f := fact(statestore.Attempt{Run: r.ID, Node: r.NodeID(i), Attempt: r.Nodes[i].Attempt}); f.State {
		case statestore.ClaimLive:
			ev.Claimed[i] = true
		case statestore.ClaimOrphaned:
			ev.Orphaned[i] = f.Holder
		}
	}
	for _, a := range r.InFlightInstances() {
		switch f := fact(statestore.Attempt{Run: r.ID, Node: r.NodeID(a.Node), Instance: a.Instance, Attempt: a.Attempt}); f.State {
		case statestore.ClaimLive:
			ev.Instances[a.Slot] = true
		case statestore.ClaimOrphaned:
			ev.OrphanedInstances[a.Slot] = f.Holder
		}
	}
	return ev
}
