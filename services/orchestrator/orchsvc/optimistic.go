package orchsvc

import (
	"context"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
)

// Optimistic start. A batch's first sight of a run is usually its start
// request, and then nobody holds the run yet: instead of taking the lock
// (one round trip) and then writing the new run (a second one), the run is
// built in memory first and its first write rides in the batch's persist
// pipeline as statestore.QueueStart, which takes the lock, bumps the fence
// and creates the run in one atomic step. When the lock is held elsewhere
// or the run was started already, nothing is written and the run's events
// go the normal way (acquireAll, apply, QueueWrite) in the batch's next
// round: the in-memory run built from the start alone is dropped.

// optimistic reports whether g may start optimistically: every event is a
// start (the usual case is exactly one), the run is not held yet, and its
// workflow has no concurrency cap (admission reads Redis before the run
// may start, so those runs keep the normal path).
func (s *Service) optimistic(g *runBatch) bool {
	if s.cached(g.run) != nil {
		return false
	}
	for _, in := range g.events {
		if in.start == nil {
			return false
		}
	}
	return g.events[0].plan.Graph.Def.Concurrency <= 0
}

// prepare makes every group ready to apply: on a batch's first round the
// groups that qualify start optimistically (an empty owned, fence 0, with
// their lock value chosen), and acquireAll takes and loads the others.
func (s *Service) prepare(ctx context.Context, groups []*runBatch, first bool) error {
	normal := groups
	if first {
		normal = groups[:0:0]
		for _, g := range groups {
			g.lock = ""
			if s.optimistic(g) {
				g.lock = lockValue(s.cfg.ID)
				g.o = &owned{lock: g.lock}
				continue
			}
			normal = append(normal, g)
		}
	} else {
		for _, g := range groups {
			g.lock = ""
		}
	}
	return s.acquireAll(ctx, normal)
}

// queueStart adds g's optimistic start to pipe. The lock's value becomes
// this orchestrator's lease before the pipeline runs: if the pipeline
// fails, the lock may have been taken, and the failed batch's disownAll
// then releases it (compare-and-delete) instead of leaving it to expire.
// The lease is pending until started settles it: a refresh that ran before
// the pipeline took the lock would otherwise find no lock, take the lease
// for lost and forget it — and the lock the start then took would block
// the run's next batch until it expired (under load, dozens of runs a
// second; nothing refreshed it).
func (s *Service) queueStart(ctx context.Context, pipe redis.Pipeliner, g *runBatch) {
	req := statestore.LockRequest{HeldLock: statestore.HeldLock{Run: g.run, Value: g.lock}, Prev: s.leases.value(g.run)}
	s.leases.addPending(g.run, g.lock)
	g.start = s.keys.QueueStart(ctx, pipe, g.write, req, s.cfg.LockTTL)
}

// started settles g's optimistic start once its pipeline has run and
// reports whether the run was created. Whenever the lock was taken (created,
// or the run existed) it stays this orchestrator's lease; a created run is
// cached with its new fence, exactly as if acquireAll had loaded it.
func (s *Service) started(g *runBatch) (bool, error) {
	outcome, fence, err := g.start.Result()
	if err != nil {
		return false, err
	}
	if outcome == statestore.StartLocked {
		s.leases.take([]string{g.run}) // another holder's lock: nothing to release
	} else {
		s.leases.confirm(g.run, g.lock)
	}
	if outcome != statestore.StartApplied {
		s.log.Debug("optimistic start fell back to the normal path", logkey.RunID, g.run, logkey.Outcome, outcome)
		return false, nil
	}
	g.o.fence = fence
	s.fences.takeover(g.run, fence, time.Now()) // remembered: the run is ours from its start
	s.owned[g.run] = g.o
	return true, nil
}
