package orchsvc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/braidhq/braid/services/orchestrator/internal/failpoint"
	"github.com/redis/go-redis/v9"
)

// runBatch is one run's share of a batch.
type runBatch struct {
	run    string
	events []inbound
	o      *owned
	eff    *core.Effects
	write  statestore.RunWrite
	cmd    *redis.Cmd
	// lock is the lock value of an optimistic start ("" on the normal
	// path), and start its queued write (see optimistic.go).
	lock  string
	start *statestore.StartCmd
	// dropActive repairs the active-runs index for a run found finished.
	dropActive bool
	admitted   bool   // a capped run got its slot in this batch: nudge the next ones
	reopened   bool   // a finished capped run took a slot to reopen (release it if it stays finished)
	spans      []span // how the batch's node changes split into RunEvents (toWrite)
	// orphans are messages about a run that was never started; they are
	// dead-lettered once the batch is stored.
	orphans []eventbus.Message
}

// maxStaleRetries bounds how often a run's events are re-applied after the
// fence refused a write (the lock moved during the batch). An optimistic
// start that falls back to the normal path does not count.
const maxStaleRetries = 3

// handleBatch applies a fetched batch: group by run, apply, persist in one
// pipeline, publish, then hands the batch to the committer. Failures (Redis or
// the broker down, a lock that cannot be had) are retried with backoff until
// they pass or ctx ends; the offsets stay uncommitted meanwhile, so nothing
// is lost if the process dies. A batch whose messages could not be
// published before shutdown (errUnpublished) is not committed either.
func (s *Service) handleBatch(ctx context.Context, msgs []eventbus.Message, commits *eventbus.Committer) {
	backoff := 50 * time.Millisecond
	for {
		err := s.tryBatch(context.WithoutCancel(ctx), msgs)
		if err == nil {
			break
		}
		if errors.Is(err, errUnpublished) {
			s.log.Error("batch left uncommitted at shutdown", "messages", len(msgs), "err", err)
			return
		}
		s.log.Error("batch failed; retrying", "messages", len(msgs), "err", err, "backoff", backoff)
		s.disownAll(ctx)
		if statestore.IsNoScript(err) {
			s.reloadScripts(ctx)
		}
		if sleep(ctx, backoff); ctx.Err() != nil {
			return
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	commits.Add(msgs...)
}

// reloadScripts loads the Lua scripts again after Redis lost them (a
// restart empties its script cache); a failure is retried with the batch.
func (s *Service) reloadScripts(ctx context.Context) {
	if err := statestore.LoadScripts(context.WithoutCancel(ctx), s.rdb); err != nil {
		s.log.Warn("reload redis scripts", "err", err)
		return
	}
	s.log.Info("redis had lost its scripts; loaded them again")
}

func (s *Service) tryBatch(ctx context.Context, msgs []eventbus.Message) error {
	now := time.Now().UnixMilli()
	groups, err := s.group(ctx, msgs, now)
	if err != nil {
		return err
	}
	for round, stale := 0, 0; len(groups) > 0; round++ {
		if stale == maxStaleRetries {
			return fmt.Errorf("fence kept moving for %d runs", len(groups))
		}
		if err := s.prepare(ctx, groups, round == 0); err != nil {
			return err
		}
		for _, g := range groups {
			s.apply(ctx, g)
		}
		for _, g := range groups {
			for _, m := range g.orphans {
				if err := s.deadLetter(ctx, m, errUnknownRun); err != nil {
					return err
				}
			}
		}
		var refused bool
		if groups, refused, err = s.persist(ctx, groups); err != nil {
			return err
		}
		if refused {
			stale++
		}
	}
	return nil
}

// errUnknownRun is the dead-letter reason of events for runs never started.
var errUnknownRun = errors.New("event for a run that was never started (unknown run id, or its start is still on its way)")

// group decodes msgs into per-run batches in arrival order; poison messages
// go to their dead-letter topic.
func (s *Service) group(ctx context.Context, msgs []eventbus.Message, now int64) ([]*runBatch, error) {
	byRun := map[string]*runBatch{}
	var order []*runBatch
	for _, m := range msgs {
		in, err := decode(m, now)
		if err == nil && in.start != nil {
			_, err = s.plans.get(ctx, in.start.Workflow, int(in.start.Version))
			if err != nil && !errors.Is(err, statestore.ErrNotFound) && !errors.Is(err, errBadDefinition) {
				return nil, err // Redis trouble: retry the batch later
			}
		}
		if err != nil {
			if err := s.deadLetter(ctx, m, err); err != nil {
				return nil, err
			}
			continue
		}
		g := byRun[in.run]
		if g == nil {
			g = &runBatch{run: in.run}
			byRun[in.run] = g
			order = append(order, g)
		}
		in.msg = m
		g.events = append(g.events, in)
	}
	return order, nil
}

func (s *Service) deadLetter(ctx context.Context, m eventbus.Message, reason error) error {
	s.log.Warn("dead-lettering message", "topic", m.Topic, "partition", m.Partition, "offset", m.Offset, "err", reason)
	if err := s.prod.DeadLetter(ctx, m, reason.Error()); err != nil {
		return fmt.Errorf("dead-letter %s@%d: %w", m.Topic, m.Offset, err)
	}
	return nil
}

// apply applies the events of a run held by acquireAll to the core.
func (s *Service) apply(ctx context.Context, g *runBatch) {
	g.eff, g.cmd, g.start, g.dropActive, g.orphans, g.admitted, g.reopened = &core.Effects{}, nil, nil, false, nil, false, false
	if g.o.takenOver {
		g.o.takenOver = false
		s.repairTakeover(ctx, g)
	}
	for _, in := range g.events {
		s.applyOne(ctx, g, in)
	}
}

// applyOne applies one event, creating the run on its first start.
func (s *Service) applyOne(ctx context.Context, g *runBatch, in inbound) {
	if g.o.run == nil {
		if in.reconcile {
			// Not started: its start is on its way, or was lost with the
			// process that recorded it.
			s.recoverPending(ctx, g, in.ev.(core.Reconcile).Now)
			return
		}
		if in.start == nil {
			g.orphans = append(g.orphans, in.msg)
			return
		}
		r, err := s.newRun(ctx, in)
		if err != nil {
			s.log.Warn("run input rejected", "run_id", g.run, "err", err)
		}
		g.o.run = r
		if err != nil {
			r.Reject(err.Error(), in.ev.(core.Start).Now, g.eff)
			return
		}
		if !s.admitted(ctx, r) {
			r.Hold(in.ev.(core.Start).Now, g.eff)
			return
		}
		g.admitted = workflowCap(r) > 0
	}
	if in.ref != "" {
		s.loadRef(ctx, &in)
	}
	if c, ok := in.ev.(core.Control); ok && reopens(c, g.o.run) {
		in.ev = s.admitReopen(ctx, g, c)
	}
	if in.reconcile {
		if g.o.run.Status.Terminal() {
			g.dropActive = true
			return
		}
		now := in.ev.(core.Reconcile).Now
		if g.o.run.Held && s.readmit(ctx, g.o.run) {
			g.o.run.Apply(core.Admit{Now: now}, g.eff)
			g.admitted = true
		}
		in.ev = s.reconcileEvent(ctx, g.o.run, now, false)
	}
	lost := g.eff.Lost
	g.o.run.Apply(in.ev, g.eff)
	s.LostAttempts.Add(int64(g.eff.Lost - lost))
}

// loadRef replaces a result's output reference by the stored output.
func (s *Service) loadRef(ctx context.Context, in *inbound) {
	res := in.ev.(core.Result)
	b, err := s.rdb.Get(ctx, in.ref).Bytes()
	if err != nil {
		res.Status, res.Error, res.Permanent = core.ResultFailed, fmt.Sprintf("output reference %s unreadable: %v", in.ref, err), false
	} else {
		res.Output = b
	}
	in.ev = res
}

// persist writes every run's effects in one pipeline and publishes what
// follows. It returns the runs to re-apply: those whose writes the fence
// refused (then refused is true) and those whose optimistic start fell back.
func (s *Service) persist(ctx context.Context, groups []*runBatch) (retry []*runBatch, refused bool, err error) {
	pipe := s.rdb.Pipeline()
	for _, g := range groups {
		if g.dropActive {
			pipe.ZRem(ctx, s.keys.ActiveRuns(), g.run)
		}
		if g.eff.Empty() && !g.eff.Created {
			continue
		}
		g.write = s.toWrite(g)
		if g.lock != "" {
			s.queueStart(ctx, pipe, g)
		} else {
			g.cmd = s.keys.QueueWrite(ctx, pipe, g.write)
		}
		s.queueIndexes(ctx, pipe, g)
		if g.o.run != nil && g.o.run.Status.Terminal() && g.eff.RunStatusChanged() {
			// After the write in the same pipeline: a waiter woken by this
			// reads the ended run (a write the fence refused makes it a
			// spurious wake-up; the waiter reads and waits on).
			pipe.Publish(ctx, s.keys.EndedChannel(), g.run)
		}
	}
	if failpoint.Enabled {
		s.holdWrite(groups)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, false, fmt.Errorf("persist: %w", err)
	}
	var applied []*runBatch
	var out []eventbus.Message
	for _, g := range groups {
		ok, err := s.persisted(g)
		switch {
		case err != nil:
			return nil, false, err
		case ok:
			if failpoint.Enabled {
				s.exitAfterWrite(g)
			}
			applied = append(applied, g)
			msgs, err := s.messages(g)
			if err != nil {
				return nil, false, err
			}
			out = append(out, msgs...)
		case g.lock != "":
			retry = append(retry, g)
		case g.cmd != nil:
			refused = true
			s.StaleWrites.Add(1)
			s.log.Warn("fence refused write; reloading run", "run_id", g.run)
			delete(s.owned, g.run)
			retry = append(retry, g)
		}
	}
	if err := s.publish(ctx, out); err != nil {
		return nil, false, err
	}
	s.announceStops(ctx, applied)
	s.release(ctx, applied)
	for _, g := range applied {
		if g.o.run != nil && g.o.run.Status.Terminal() && g.eff.RunStatusChanged() {
			s.retire(g.run)
		}
	}
	return retry, refused, nil
}

// persisted reports whether g's write (if it had one) was applied.
func (s *Service) persisted(g *runBatch) (bool, error) {
	switch {
	case g.lock != "" && g.start != nil:
		return s.started(g)
	case g.cmd != nil:
		return g.cmd.Val() == int64(statestore.WriteApplied), nil
	}
	return false, nil
}
