package orchsvc

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// The busy-runs index (statestore.Keys.BusyRunsOf) holds the active runs a
// worker's death or a lapsed claim can hurt: those with attempts queued or
// running, and those waiting for a concurrency slot (core.Run.Busy). The
// reconciler walks it every ReconcileEvery and at once when a worker starts
// or dies; it walks the whole active index only every ReconcileAllEvery, at
// a quarter of the rate. So an attempt lost with its worker is sent again
// within a pass over the busy runs, however many runs wait on approvals or
// timers, and those waiting runs cost an idle stack little.
//
// The index may hold more than the busy runs, never for long fewer: a run
// joins it with the write that queues its first attempt (before that write,
// like the active index, so a crash cannot keep the attempt and lose the
// entry), again whenever a write finds it busy after a load from Redis, and
// leaves it when it ends or when a reconcile finds it idle. An entry lost
// anyway (a Redis failover) costs that run the slower walk of every active
// run, no more.

// busyMove is what a write does to its run's busy-runs index entry.
type busyMove int8

const (
	busyKeep busyMove = iota // nothing
	busyAdd                  // ZADD, queued before the run's write
	busyDrop                 // ZREM
)

// after is whether the run is in the index once a move stored, from was.
func (m busyMove) after(was bool) bool {
	switch m {
	case busyAdd:
		return true
	case busyDrop:
		return false
	}
	return was
}

// queueBusy queues the busy-runs index update g's batch calls for, before
// the run's write, and returns it. A run that ended in the batch leaves the
// index after its write instead (queueUnindex), with the active index.
func (s *Service) queueBusy(ctx context.Context, pipe redis.Pipeliner, g *runBatch) busyMove {
	if g.dropActive { // a reconcile found the run ended or gone: queueGroup dropped both entries
		return busyDrop
	}
	o := g.o
	if o == nil || o.run == nil || o.run.Status.Terminal() {
		return busyKeep
	}
	r := o.run
	switch {
	case !o.busy && (len(g.eff.Dispatches) > 0 || r.Held || (o.loaded && r.Busy())):
		pipe.ZAdd(ctx, s.keys.BusyRunsOf(g.run), redis.Z{Score: float64(r.CreatedAt), Member: g.run})
		return busyAdd
	case reconciles(g) && !r.Busy():
		pipe.ZRem(ctx, s.keys.BusyRunsOf(g.run), g.run)
		return busyDrop
	}
	return busyKeep
}

// reconciles reports whether g's events hold a RECONCILE request.
func reconciles(g *runBatch) bool {
	for _, in := range g.events {
		if in.reconcile {
			return true
		}
	}
	return false
}
