package orchsvc

import (
	"context"
	"errors"
	"fmt"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/braidhq/braid/services/orchestrator/internal/failpoint"
	"github.com/redis/go-redis/v9"
)

// written is what write did with a batch's groups.
type written struct {
	// applied are the groups whose write (if any) was stored.
	applied []*runBatch
	// retry are the groups to take round again: the fence refused their
	// write (then refused is true), or their optimistic start fell back.
	retry   []*runBatch
	refused bool
}

// write stores every run's effects in one pipeline: each run's fenced
// write (or optimistic start), the indexes and timers beside it (in the
// order queueIndexes explains), and the notifications that follow a stored
// write (a run's end for ?wait= waiters, cancelled attempts for the
// workers holding them). On one server the notifications ride after the
// write in the same pipeline; on a Redis Cluster they follow it
// (publishNotices). One that follows a refused write is a spurious
// wake-up, which its receiver checks and ignores.
func (s *Service) write(ctx context.Context, groups []*runBatch) (written, error) {
	pipe := s.rdb.Pipeline()
	for _, g := range groups {
		s.queueGroup(ctx, pipe, g)
	}
	if failpoint.Enabled {
		s.holdWrite(groups)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return written{}, fmt.Errorf("persist: %w", err)
	}
	for _, g := range groups {
		if g.o != nil {
			g.o.loaded = false
			g.o.busy = g.busy.after(g.o.busy)
		}
	}
	if s.clustered() {
		s.publishNotices(ctx, groups)
	}
	return s.sortWritten(groups)
}

// queueGroup queues g's share of the write pipeline.
func (s *Service) queueGroup(ctx context.Context, pipe redis.Pipeliner, g *runBatch) {
	if g.dropActive {
		pipe.ZRem(ctx, s.keys.ActiveRunsOf(g.run), g.run)
		pipe.ZRem(ctx, s.keys.BusyRunsOf(g.run), g.run)
	}
	s.queueReindex(ctx, pipe, g)
	g.busy = s.queueBusy(ctx, pipe, g)
	if g.eff.Empty() && !g.eff.Created {
		return
	}
	g.write = s.toWrite(g)
	s.queueIndexes(ctx, pipe, g)
	if g.lock != "" {
		s.queueStart(ctx, pipe, g)
	} else {
		g.cmd = s.keys.QueueWrite(ctx, pipe, g.write)
	}
	s.queueUnindex(ctx, pipe, g)
	if !s.clustered() {
		s.queueNotices(ctx, pipe, g)
	}
}

// clustered reports whether the store is a Redis Cluster.
func (s *Service) clustered() bool {
	_, ok := s.rdb.(*redis.ClusterClient)
	return ok
}

// publishNotices sends the batch's notices once its write pipeline has
// returned, on a Redis Cluster. On one server they ride in that pipeline,
// after the writes they announce; on a cluster a keyless PUBLISH goes to
// any node, concurrently with the write's node, and a waiter woken before
// the write is applied would read the run unchanged and wait for its
// recheck timer instead. Best effort, as the notices are.
func (s *Service) publishNotices(ctx context.Context, groups []*runBatch) {
	pipe := s.rdb.Pipeline()
	for _, g := range groups {
		if !g.eff.Empty() || g.eff.Created {
			s.queueNotices(ctx, pipe, g)
		}
	}
	if pipe.Len() == 0 {
		return
	}
	if _, err := pipe.Exec(ctx); err != nil {
		s.log.DebugContext(ctx, "publish run notices", logkey.Err, err)
	}
}

// queueReindex re-adds a run loaded from Redis that has not ended to the
// active-runs index (ZADD NX: a no-op when it is there). A crash, or a
// cluster node failing, can keep a run's write and lose the index update
// beside it; the redelivered events then apply as duplicates that change
// nothing, so only a load notices. With the run in the index, the
// reconciler repairs the rest (overdue retries, deadlines, lost dispatches).
func (s *Service) queueReindex(ctx context.Context, pipe redis.Pipeliner, g *runBatch) {
	if g.o == nil || !g.o.loaded {
		return
	}
	if r := g.o.run; r != nil && !r.Status.Terminal() {
		pipe.ZAddNX(ctx, s.keys.ActiveRunsOf(g.run), redis.Z{Score: float64(r.CreatedAt), Member: g.run})
	}
}

// queueNotices queues the pub/sub notices of g's write: the run ended
// (carrying the run as stored, so api waiters answer without reading it;
// statestore.Keys.QueueEnded), or the batch cancelled attempts
// (workers holding them check their claims at once, and kill a running
// shell, instead of at their next heartbeat). Best effort: the waiters'
// timeouts and the heartbeats are the guarantee, the notices the speed.
func (s *Service) queueNotices(ctx context.Context, pipe redis.Pipeliner, g *runBatch) {
	if r := g.o.run; r != nil && r.Status.Terminal() && g.eff.RunStatusChanged() {
		s.keys.QueueEnded(ctx, pipe, g.run, !s.clustered())
	}
	for _, c := range g.eff.Changes {
		if c.State == records.NodeCancelled {
			pipe.Publish(ctx, s.keys.StopChannel(), g.run)
			return
		}
	}
}

// sortWritten reads the outcome of each group's write once the pipeline
// ran.
func (s *Service) sortWritten(groups []*runBatch) (written, error) {
	var w written
	for _, g := range groups {
		ok, err := s.persisted(g)
		switch {
		case err != nil:
			return written{}, err
		case ok:
			if failpoint.Enabled {
				s.exitAfterWrite(g)
			}
			w.applied = append(w.applied, g)
		case g.lock != "":
			w.retry = append(w.retry, g)
		case g.cmd != nil:
			w.refused = true
			s.StaleWrites.Add(1)
			s.log.WarnContext(g.logCtx(), "fence refused write; reloading run", logkey.RunID, g.run)
			delete(s.owned, g.run)
			w.retry = append(w.retry, g)
		default:
			w.applied = append(w.applied, g) // nothing to write; its messages (dead letters, a re-requested start) still go out
		}
	}
	return w, nil
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
