package orchsvc

import (
	"context"
	"errors"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/records"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/redis/go-redis/v9"
)

// Workflow concurrency (`concurrency` at the top of a definition): a run
// of a capped workflow starts only when statestore.Admit grants it a slot.
// gather asks for the slot (slotRequest), the core decides from the answer
// whether the run starts or waits held (core.Start.NoSlot,
// core.Control.NoSlot, core.Reconcile.Slot), and settle frees the slot of a
// run that ended and nudges the runs the freed slots admit with a
// RECONCILE control on their own partitions; their owners then admit and
// start them. A lost nudge costs one reconcile interval: every held run is
// in the active index, so the reconciler retries its admission.

// workflowCap is r's workflow concurrency cap (0 = none).
func workflowCap(r *core.Run) int { return r.Plan.Graph.Def.Concurrency }

// reopens reports whether c is a retry or rerun of r, a finished run of a
// workflow with a concurrency cap: it must then take a slot like a new run.
func reopens(c core.Control, r *core.Run) bool {
	return (c.Action == core.ControlRetry || c.Action == core.ControlRerunFrom) &&
		r != nil && r.Status.Terminal() && workflowCap(r) > 0
}

// slotRequest says whether g's events need a slot of its workflow, and
// where the run queues for it: a new run by its request time, a reopened
// one by the time of the retry or rerun, a held one by its creation. The
// run's state is the one before the batch: a run that ends and is
// reopened in the same batch asked for nothing, and waits held until the
// reconciler readmits it.
func slotRequest(g *runBatch, reconciles bool) (workflow string, limit int, score int64, ok bool) {
	r := g.o.run
	if r == nil {
		for _, in := range g.events {
			if in.start != nil && in.plan.Graph.Def.Concurrency > 0 {
				return in.plan.Graph.Def.Name, in.plan.Graph.Def.Concurrency, createdAt(in), true
			}
		}
		return "", 0, 0, false
	}
	if workflowCap(r) <= 0 {
		return "", 0, 0, false
	}
	if r.Held && reconciles {
		return r.Workflow, workflowCap(r), r.CreatedAt, true
	}
	for _, in := range g.events {
		if c, isControl := in.ev.(core.Control); isControl && reopens(c, r) {
			return r.Workflow, workflowCap(r), c.Now, true
		}
	}
	return "", 0, 0, false
}

// repairAdmission is the reconciler's admission retry for a held run that
// was refused a slot. Before asking again it releases places held by runs
// that ended or vanished without releasing them (an orchestrator that died
// between storing a run's end and releasing; an api that recorded a run
// and then could not request it), so a stale entry can neither keep a slot
// nor block the head of the queue. Redis trouble counts as "not yet".
func (s *Service) repairAdmission(ctx context.Context, r *core.Run) bool {
	ids, err := s.keys.Admitted(ctx, s.rdb, r.Workflow)
	if err != nil {
		return false
	}
	head, err := s.rdb.ZRange(ctx, s.keys.AdmitQueue(r.Workflow), 0, 0).Result()
	if err != nil {
		return false
	}
	ids = append(ids, head...)
	pipe := s.rdb.Pipeline()
	status := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		status[i] = pipe.HGet(ctx, s.keys.Run(id), records.FieldStatus)
	}
	_, _ = pipe.Exec(ctx) // a missing run reads as redis.Nil: status ""
	freed := false
	for i, c := range status {
		if c.Err() != nil && !errors.Is(c.Err(), redis.Nil) {
			return false
		}
		if st := records.RunStatus(c.Val()); st == "" || st.Terminal() {
			_, err := s.keys.Release(ctx, s.rdb, r.Workflow, ids[i], workflowCap(r))
			freed = freed || err == nil
		}
	}
	if !freed {
		return false
	}
	ok, err := s.keys.Admit(ctx, s.rdb, r.Workflow, r.ID, workflowCap(r), r.CreatedAt)
	if err != nil {
		s.log.Warn("workflow concurrency admission failed; the run waits", logkey.RunID, r.ID, logkey.Workflow, r.Workflow, logkey.Err, err)
	}
	return ok
}

// settle frees the slots of the capped runs that ended in this batch (or
// took a slot to reopen and stayed finished), and returns the nudges for
// the queued runs that free slots admit now — after an end, and after an
// admission (a run held only because its start overtook an earlier
// request's start must not wait for the reconciler once that one
// started). Runs of uncapped workflows cost nothing here. Redis trouble
// is logged: the reconciler readmits the waiting runs.
func (s *Service) settle(ctx context.Context, applied []*runBatch) []eventbus.Message {
	var nudge []string
	for _, g := range applied {
		r := g.o.run
		if r == nil || workflowCap(r) <= 0 {
			continue
		}
		var next []string
		var err error
		switch {
		case r.Status.Terminal() && (g.eff.RunStatusChanged() || g.reopened):
			next, err = s.keys.Release(ctx, s.rdb, r.Workflow, r.ID, workflowCap(r))
		case g.admitted:
			next, err = s.keys.Admissible(ctx, s.rdb, r.Workflow, workflowCap(r))
		}
		if err != nil {
			s.log.Warn("workflow concurrency: could not look up waiting runs; the reconciler will", logkey.RunID, r.ID, logkey.Err, err)
		}
		nudge = append(nudge, next...)
	}
	msgs := make([]eventbus.Message, 0, len(nudge))
	for _, id := range nudge {
		m, err := eventbus.NewMessage(eventsv1.TopicWorkflowControl, id, &eventsv1.RunControl{
			RunId: id, Action: eventsv1.ControlAction_CONTROL_ACTION_RECONCILE, RequestedAtMs: time.Now().UnixMilli(),
		})
		if err == nil {
			msgs = append(msgs, m)
		}
	}
	return msgs
}
