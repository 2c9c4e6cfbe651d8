package orchsvc

import (
	"context"
	"errors"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/runstate"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/redis/go-redis/v9"
)

// Workflow concurrency (`concurrency` at the top of a definition): a new run
// of a capped workflow starts only when statestore.Admit grants it a slot;
// otherwise the core records it held (pending). A finished run releases its
// slot and nudges the runs the freed slots admit with a RECONCILE control on
// their own partitions; their owners then admit and start them. A lost nudge
// costs one reconcile interval: every held run is in the active index, so
// the reconciler retries its admission.

// workflowCap is r's workflow concurrency cap (0 = none).
func workflowCap(r *core.Run) int { return r.Plan.Graph.Def.Concurrency }

// admitted reports whether run r may start now. A Redis error counts as
// "not yet": the run is held and the reconciler asks again.
func (s *Service) admitted(ctx context.Context, r *core.Run) bool {
	limit := workflowCap(r)
	if limit <= 0 {
		return true
	}
	ok, err := s.keys.Admit(ctx, s.rdb, r.Workflow, r.ID, limit, r.CreatedAt)
	if err != nil {
		s.log.Warn("workflow concurrency admission failed; the run waits", "run_id", r.ID, "workflow", r.Workflow, "err", err)
	}
	return ok
}

// reopens reports whether c is a retry or rerun of r, a finished run of a
// workflow with a concurrency cap: it must then take a slot like a new run.
func reopens(c core.Control, r *core.Run) bool {
	return (c.Action == core.ControlRetry || c.Action == core.ControlRerunFrom) &&
		r != nil && r.Status.Terminal() && workflowCap(r) > 0
}

// admitReopen asks a slot for the run c reopens, queued by the time of the
// request (c.Now), and returns c, marked NoSlot when none is free: the run
// then waits held until the reconciler readmits it. A slot taken by a
// control that reopens nothing is given back by release.
func (s *Service) admitReopen(ctx context.Context, g *runBatch, c core.Control) core.Control {
	r := g.o.run
	ok, err := s.keys.Admit(ctx, s.rdb, r.Workflow, r.ID, workflowCap(r), c.Now)
	if err != nil {
		s.log.Warn("workflow concurrency admission failed; the reopened run waits", "run_id", r.ID, "workflow", r.Workflow, "err", err)
	}
	if !ok {
		c.NoSlot = true
		return c
	}
	g.admitted, g.reopened = true, true
	return c
}

// readmit is the reconciler's admission retry for a held run. Before asking
// again it releases places held by runs that ended or vanished without
// releasing them (an orchestrator that died between storing a run's end and
// releasing; an api that recorded a run and then could not request it), so
// a stale entry can neither keep a slot nor block the head of the queue.
func (s *Service) readmit(ctx context.Context, r *core.Run) bool {
	if s.admitted(ctx, r) {
		return true
	}
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
		status[i] = pipe.HGet(ctx, s.keys.Run(id), statestore.FieldStatus)
	}
	_, _ = pipe.Exec(ctx) // a missing run reads as redis.Nil: status ""
	freed := false
	for i, c := range status {
		if c.Err() != nil && !errors.Is(c.Err(), redis.Nil) {
			return false
		}
		if st := runstate.RunStatus(c.Val()); st == "" || st.Terminal() {
			_, err := s.keys.Release(ctx, s.rdb, r.Workflow, ids[i], workflowCap(r))
			freed = freed || err == nil
		}
	}
	return freed && s.admitted(ctx, r)
}

// release frees the slots of the runs in groups that ended in this batch,
// and nudges the queued runs that free slots admit now — after an end, and
// after an admission (a run held only because its start overtook an earlier
// request's start must not wait for the reconciler once that one started).
func (s *Service) release(ctx context.Context, groups []*runBatch) {
	var nudge []string
	for _, g := range groups {
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
			s.log.Warn("workflow concurrency: could not look up waiting runs; the reconciler will", "run_id", r.ID, "err", err)
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
	if len(msgs) > 0 {
		// A nudge lost at shutdown only delays the waiting runs until the
		// reconciler readmits them; it does not hold the batch back.
		_ = s.publish(ctx, msgs)
	}
}
