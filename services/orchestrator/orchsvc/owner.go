package orchsvc

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/runstate"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/bsm/redislock"
)

// owned is a run this orchestrator holds the lock of, with its cached state.
// The cache is valid exactly as long as the fence stays ours; the lock
// itself is kept alive by leases.
type owned struct {
	fence int64
	run   *core.Run // nil: the run does not exist (yet)
}

// acquire takes run's lock (waiting up to LockWait for another holder to let
// go), bumps the fencing counter and loads the run, all before any write.
func (s *Service) acquire(ctx context.Context, run string) (*owned, error) {
	if o := s.owned[run]; o != nil {
		if s.leases.touch(run) {
			return o, nil
		}
		delete(s.owned, run) // the lock lapsed or went idle: reload
	}
	wctx, cancel := context.WithTimeout(ctx, s.cfg.LockWait)
	defer cancel()
	lock, err := s.locker.Obtain(wctx, s.keys.Lock(run), s.cfg.LockTTL, &redislock.Options{
		RetryStrategy: redislock.ExponentialBackoff(2*time.Millisecond, 250*time.Millisecond),
		Metadata:      s.cfg.ID,
	})
	if err != nil {
		return nil, fmt.Errorf("lock run %s: %w", run, err)
	}
	o, err := s.load(ctx, run)
	if err != nil {
		_ = lock.Release(context.WithoutCancel(ctx))
		return nil, err
	}
	s.leases.add(run, lock)
	s.owned[run] = o
	return o, nil
}

// load bumps the fence and reads the run in one round trip.
func (s *Service) load(ctx context.Context, run string) (*owned, error) {
	pipe := s.rdb.Pipeline()
	fence := pipe.Incr(ctx, s.keys.Fence(run))
	f := pipe.HGetAll(ctx, s.keys.Run(run))
	n := pipe.HGetAll(ctx, s.keys.Nodes(run))
	out := pipe.HGetAll(ctx, s.keys.Outputs(run))
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("load run %s: %w", run, err)
	}
	o := &owned{fence: fence.Val()}
	stored := statestore.StoredRun{Fields: f.Val(), Nodes: n.Val(), Outputs: out.Val()}
	if !stored.Started() {
		return o, nil // unknown, or recorded as pending by the api: a start creates it
	}
	r, err := s.restore(ctx, run, stored)
	if err != nil {
		return nil, err
	}
	o.run = r
	return o, nil
}

// restore rebuilds a core.Run from its stored hashes.
func (s *Service) restore(ctx context.Context, id string, st statestore.StoredRun) (*core.Run, error) {
	f := st.Fields
	ver, _ := strconv.Atoi(f[statestore.FieldVersion])
	plan, err := s.plans.get(ctx, f[statestore.FieldWorkflow], ver)
	if err != nil {
		return nil, fmt.Errorf("restore run %s: %w", id, err)
	}
	defs := plan.Graph.Def.Nodes
	nodes := make([]runstate.NodeRecord, len(defs))
	outputs := make([]json.RawMessage, len(defs))
	for i, d := range defs {
		rec, err := runstate.DecodeNodeRecord([]byte(st.Nodes[d.ID]))
		if err != nil {
			return nil, fmt.Errorf("restore run %s node %s: %w", id, d.ID, err)
		}
		nodes[i] = rec
		if o, ok := st.Outputs[d.ID]; ok {
			outputs[i] = json.RawMessage(o)
		}
	}
	r := core.Restore(id, ver, plan, nodes, outputs)
	if err := s.restoreFanOuts(ctx, r); err != nil {
		return nil, err
	}
	r.Status = runstate.RunStatus(f[statestore.FieldStatus])
	r.Input = json.RawMessage(f[statestore.FieldInput])
	r.CreatedAt = atoi64(f[statestore.FieldCreated])
	r.StartedAt = atoi64(f[statestore.FieldStarted])
	r.FinishedAt = atoi64(f[statestore.FieldFinished])
	r.Error = f[statestore.FieldError]
	r.Seq = uint64(atoi64(f[statestore.FieldSeq]))
	r.Paused = f[statestore.FieldPaused] == "1"
	r.Held = f[statestore.FieldHeld] == "1"
	return r, nil
}

func atoi64(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// pruneOwned forgets, at most once per IdleRelease, the cached runs whose
// lock was released as idle or lost. acquire would reload such a run
// anyway before using it; without the sweep the cache kept every run this
// process ever handled, finished ones included, and memory grew with them.
func (s *Service) pruneOwned(now time.Time) {
	if now.Sub(s.pruned) < s.cfg.IdleRelease {
		return
	}
	s.pruned = now
	for run := range s.owned {
		if !s.leases.held(run) {
			delete(s.owned, run)
		}
	}
}

// disown forgets a run's cached state and releases its lock.
func (s *Service) disown(ctx context.Context, run string) {
	delete(s.owned, run)
	s.leases.release(ctx, run)
}

// disownAll forgets every cached run (after a failed batch, when the cache
// may no longer match what Redis holds).
func (s *Service) disownAll(ctx context.Context) {
	for run := range s.owned {
		s.disown(ctx, run)
	}
}
