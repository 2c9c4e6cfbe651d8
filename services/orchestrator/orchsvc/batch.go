package orchsvc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// A batch of consumed messages goes through the orchestrator in one
// straight line (tryBatch), each step a function with one job:
//
//	decode   messages → per-run groups of core events; poison → dead letters
//	prepare  take the runs' locks and load their state (or start optimistically)
//	gather   read, in one pipelined round trip, every other fact the core
//	         needs: output references, claims, pending records, admission
//	apply    the core decides everything from the state and the facts (no I/O)
//	write    one pipeline: every run's fenced write and its indexes; the
//	         batch's dispatches are published meanwhile (see below)
//	settle   free the workflow concurrency slots of runs that ended
//	publish  run events, re-requested starts, nudges, dead letters
//
// and the caller commits the offsets once tryBatch returned nil. Runs whose
// write the fence refused go round again from prepare.
//
// Dispatches beside the write: a dispatch is produced while the write that
// queues its attempt is on its way to Redis, not after it, which takes one
// round trip off every hop of a run. A worker claims an attempt only once a
// record names it (statestore.ClaimAhead: it claims again shortly), so a
// dispatch that overtakes its write waits for it, and one whose write never
// lands (refused by the fence, failed, or the process died) is dropped by
// the worker after its ahead window; the events behind that write are then
// applied again (the next round, the retried batch, or the next owner after
// redelivery), deciding the same attempt or a later one. Nothing runs
// before its attempt is stored, and a dispatch delivered twice is claimed
// once. A batch tried again after a failure publishes in the old order,
// after its write, so an outage does not multiply dispatches. Two kinds of
// write always publish after it: a start of many roots (bigStart) and one
// that declares attempts lost to a restarted worker (see dispatchAhead).

// runBatch is one run's share of a batch.
type runBatch struct {
	run    string
	events []inbound
	o      *owned
	facts  facts // what gather read for apply
	eff    *core.Effects
	// out are the messages apply decided on besides the effects' dispatches
	// and run events: a re-requested start, dead letters of events for a
	// run that was never started.
	out   []eventbus.Message
	write statestore.RunWrite
	cmd   *redis.Cmd
	// lock is the lock value of an optimistic start ("" on the normal
	// path), and start its queued write (see optimistic.go).
	lock  string
	start *statestore.StartCmd
	// dropActive repairs the active-runs index for a run found finished.
	dropActive bool
	// busy is what the write queued for the busy-runs index (busy.go):
	// busyAdd, busyDrop or busyKeep; the cache follows once it is stored.
	busy     busyMove
	admitted bool       // a capped run got its slot in this batch: nudge the next ones
	reopened bool       // a finished capped run took a slot to reopen (release it if it stays finished)
	spans    []span     // how the batch's node changes split into RunEvents (toWrite)
	traced   trace.Span // the run's handle span while tracing is on (tracing.go)
	// dispatched: this round's dispatches were published beside the write
	// (dispatchAhead), so the outbox leaves them out.
	dispatched bool
	// acquired: the run's lock was taken for this batch (it was not held).
	acquired bool
}

// maxStaleRetries bounds how often a run's events are re-applied after the
// fence refused a write (the lock moved during the batch). An optimistic
// start that falls back to the normal path does not count.
const maxStaleRetries = 3

// handleBatch runs tryBatch until it succeeds, then hands the batch to the
// committer. Failures (Redis or the broker down, a lock that cannot be
// had) are retried with backoff until they pass or ctx ends; the offsets
// stay uncommitted meanwhile, so nothing is lost if the process dies. A
// batch whose messages could not be published before shutdown
// (errUnpublished) is not committed either.
func (s *Service) handleBatch(ctx context.Context, msgs []eventbus.Message, commits *eventbus.Committer) {
	backoff := 50 * time.Millisecond
	for try := 0; ; try++ {
		err := s.tryBatchAhead(context.WithoutCancel(ctx), msgs, try == 0)
		if err == nil {
			break
		}
		if errors.Is(err, errUnpublished) {
			s.log.Error("batch left uncommitted at shutdown", logkey.Messages, len(msgs), logkey.Err, err)
			return
		}
		s.log.Error("batch failed; retrying", logkey.Messages, len(msgs), logkey.Err, err, logkey.Backoff, backoff)
		s.disownAll(ctx)
		if statestore.IsNoScript(err) {
			s.reloadScripts(ctx)
		}
		if clock.Sleep(ctx, backoff) != nil {
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
		s.log.Warn("reload redis scripts", logkey.Err, err)
		return
	}
	s.log.Info("redis had lost its scripts; loaded them again")
}

// tryBatch takes msgs once through the steps above, dispatching beside
// the write.
func (s *Service) tryBatch(ctx context.Context, msgs []eventbus.Message) error {
	return s.tryBatchAhead(ctx, msgs, true)
}

// tryBatchAhead is tryBatch, publishing the first round's dispatches beside
// its write only when ahead is set.
func (s *Service) tryBatchAhead(ctx context.Context, msgs []eventbus.Message, ahead bool) (err error) {
	began := time.Now()
	groups, dead, err := s.decodeBatch(ctx, msgs, began.UnixMilli())
	if err != nil {
		return err
	}
	defer func(all []*runBatch) { traceClose(all, err) }(groups)
	for round, stale := 0, 0; len(groups) > 0; round++ {
		if stale == maxStaleRetries {
			return fmt.Errorf("fence kept moving for %d runs", len(groups))
		}
		if err := s.prepare(ctx, groups, round == 0); err != nil {
			return err
		}
		if err := s.gather(ctx, groups); err != nil {
			return err
		}
		now := time.Now().UnixMilli()
		for _, g := range groups {
			s.applyTraced(g, now, began)
		}
		wrote := traceNow()
		sent, err := s.dispatchAhead(ctx, groups, ahead && round == 0)
		if err != nil {
			return err
		}
		w, err := s.write(ctx, groups)
		if perr := <-sent; err == nil {
			err = perr
		}
		if err != nil {
			return err
		}
		traceStep(groups, "write", wrote)
		out, err := s.outbox(w.applied, s.settle(ctx, w.applied), dead)
		if err != nil {
			return err
		}
		published := traceNow()
		if err := s.publish(ctx, out); err != nil {
			return err
		}
		traceStep(w.applied, "publish", published)
		s.forget(w.applied)
		s.metrics.runs(w.applied)
		groups, dead = w.retry, nil
		if w.refused {
			stale++
		}
	}
	if len(dead) > 0 {
		return s.publish(ctx, dead) // every message was poison
	}
	return nil
}

// forget retires (see retire) the runs that ended in this batch, and the
// idle runs a reconcile pass's request found nothing to repair in: their
// lock was taken for the request alone, and keeping it IdleRelease long
// would only cost its refreshes (a pass asks about every active run, most
// of them waiting on an approval, a timer or a long task). An event that
// comes before the next lease tick keeps the lock.
func (s *Service) forget(applied []*runBatch) {
	for _, g := range applied {
		if g.o.run != nil && g.o.run.Status.Terminal() && g.eff.RunStatusChanged() || idleReconcile(g) {
			s.retire(g.run)
		}
	}
}

// idleReconcile reports whether g was only reconcile requests for a run
// not held before the batch, and changed nothing.
func idleReconcile(g *runBatch) bool {
	if !g.acquired || g.o.run == nil || len(g.out) > 0 || g.admitted || g.reopened || !g.eff.Empty() {
		return false
	}
	for _, in := range g.events {
		if !in.reconcile {
			return false
		}
	}
	return true
}
