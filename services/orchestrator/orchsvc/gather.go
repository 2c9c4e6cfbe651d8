package orchsvc

import (
	"context"
	"errors"
	"fmt"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/redis/go-redis/v9"
)

// facts is what one run's events need from Redis besides the run's own
// state, read by gather so that apply does no I/O.
type facts struct {
	// outputs are the reads of the results' output references, by key.
	outputs map[string]*redis.StringCmd
	// claims are the claims of the attempts in flight when the batch began,
	// for a reconcile or a takeover repair.
	claims *statestore.ClaimReads
	// offered tells whether a live worker offers a handler, for a
	// reconcile or takeover repair (nil: every handler counts as offered).
	offered func(string) bool
	// pending is the stored record of a run not started yet, for a
	// reconcile (recoverPending).
	pending *redis.MapStringStringCmd
	// admit asks for the run's workflow concurrency slot: for a new run of
	// a capped workflow, a finished one that a retry or rerun reopens, or
	// a held one being reconciled. readmit marks the held one.
	admit   *redis.Cmd
	readmit bool
	// slot is admit's answer.
	slot bool
}

// gather reads the facts of every group in one pipelined round trip, plus
// one for the liveness of the claims' holders when claims were read, and
// the rare repair of a held run's admission (repairAdmission). Asking for
// a slot is the one write here: the admission script is idempotent, and
// a slot taken by a run that then does not start is given back by settle
// (or the reconciler's repair). Any read failing other than by a missing
// key fails the batch, which is retried: apply never guesses a fact.
func (s *Service) gather(ctx context.Context, groups []*runBatch) error {
	pipe := s.rdb.Pipeline()
	var claims []*statestore.ClaimReads
	for _, g := range groups {
		g.facts = s.queueFacts(ctx, pipe, g)
		if g.facts.claims != nil {
			claims = append(claims, g.facts.claims)
		}
	}
	if pipe.Len() == 0 {
		return nil
	}
	cmds, _ := pipe.Exec(ctx)
	for _, c := range cmds {
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return fmt.Errorf("gather facts: %w", err)
		}
	}
	if len(claims) > 0 {
		if err := s.keys.ResolveClaims(ctx, s.rdb, claims...); err != nil {
			return fmt.Errorf("gather facts: %w", err)
		}
		offered := s.offered(ctx)
		for _, g := range groups {
			if g.facts.claims != nil {
				g.facts.offered = offered
			}
		}
	}
	for _, g := range groups {
		if err := s.readSlot(ctx, g); err != nil {
			return err
		}
	}
	return nil
}

// queueFacts queues on pipe the reads g's events need.
func (s *Service) queueFacts(ctx context.Context, pipe redis.Pipeliner, g *runBatch) facts {
	f := facts{}
	r := g.o.run
	reconciles := false
	for _, in := range g.events {
		if in.ref != "" {
			if f.outputs == nil {
				f.outputs = map[string]*redis.StringCmd{}
			}
			f.outputs[in.ref] = pipe.Get(ctx, in.ref)
		}
		reconciles = reconciles || in.reconcile
	}
	switch {
	case r == nil && reconciles:
		f.pending = pipe.HGetAll(ctx, s.keys.Run(g.run))
	case r != nil && !r.Status.Terminal() && !r.Held && (reconciles || g.o.takenOver):
		f.claims = s.keys.QueueClaimReads(ctx, pipe, inFlightAttempts(r))
	}
	if workflow, limit, score, ok := slotRequest(g, reconciles); ok {
		f.admit = s.keys.QueueAdmit(ctx, pipe, workflow, g.run, limit, score)
		f.readmit = r != nil && r.Held
	}
	return f
}

// readSlot reads g's admission answer. A held run refused a slot has its
// workflow's stale admissions repaired and asks again (repairAdmission).
func (s *Service) readSlot(ctx context.Context, g *runBatch) error {
	if g.facts.admit == nil {
		return nil
	}
	ok, err := statestore.AdmitOutcome(g.facts.admit)
	if err != nil {
		return fmt.Errorf("gather facts: run %s: %w", g.run, err)
	}
	if !ok && g.facts.readmit {
		ok = s.repairAdmission(ctx, g.o.run)
	}
	g.facts.slot = ok
	return nil
}

// inFlightAttempts names r's attempts a worker may hold: plain nodes and
// fan-out instances.
func inFlightAttempts(r *core.Run) []statestore.Attempt {
	nodes, insts := r.InFlight(), r.InFlightInstances()
	atts := make([]statestore.Attempt, 0, len(nodes)+len(insts))
	for _, i := range nodes {
		atts = append(atts, statestore.Attempt{Run: r.ID, Node: r.NodeID(i), Attempt: r.Nodes[i].Attempt})
	}
	for _, a := range insts {
		atts = append(atts, statestore.Attempt{Run: r.ID, Node: r.NodeID(a.Node), Instance: a.Instance, Attempt: a.Attempt})
	}
	return atts
}
