package orchsvc

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/core"
)

// owned is a run this orchestrator holds the lock of, with its cached state.
// The cache is valid exactly as long as the fence stays ours; the lock
// itself is kept alive by leases.
type owned struct {
	fence int64
	lock  string    // the lock's value: a write is refused unless the lock still holds it
	run   *core.Run // nil: the run does not exist (yet)
	// takenOver marks a run loaded from another holder's lock, to be
	// repaired (repairTakeover) before its first batch applies.
	takenOver bool
	// loaded marks a run read from Redis rather than created or kept in
	// this process: its next write re-adds it to the active-runs index
	// (queueReindex), since what a crash cut off after its last write is
	// not re-derived when its events apply again as duplicates.
	loaded bool
	// busy: the run is in the busy-runs index as far as this owner knows
	// (it queued the entry, or found it there on load). False on a run
	// loaded from Redis until the write that finds it busy adds it again.
	busy bool
	// trace is the run's stored traceparent (records.FieldTrace): the
	// parent of spans for events that bring no trace context of their own.
	trace string
}

// Lock acquisition backoff while another orchestrator holds a run (a
// rebalance): from lockRetryMin doubling to lockRetryMax, for up to LockWait.
const (
	lockRetryMin = 2 * time.Millisecond
	lockRetryMax = 250 * time.Millisecond
)

// cached returns run's cached state if its lock is still held, and forgets
// the cache otherwise (the lock lapsed or went idle: reload).
func (s *Service) cached(run string) *owned {
	o := s.owned[run]
	if o == nil {
		return nil
	}
	if s.leases.touch(run) {
		return o
	}
	delete(s.owned, run)
	return nil
}

// acquireAll makes every group's run held and loaded before any write.
// Runs held already keep their cached state; the others are locked, their
// fences bumped and their state read in one pipelined round trip
// (statestore.AcquireRuns), whatever their number. A run whose first event
// is its start reads only whether it was started already.
//
// Runs another orchestrator holds (a rebalance) are asked for again, with
// jittered backoff, for up to LockWait. A batch that did not get every
// lock holds none of them while it waits: two orchestrators each holding a
// run the other's batch needs (both fetched the same runs' events around a
// rebalance) would otherwise wait for each other until LockWait, again and
// again.
func (s *Service) acquireAll(ctx context.Context, groups []*runBatch) error {
	deadline, wait := time.Now().Add(s.cfg.LockWait), lockRetryMin
	var refused []string
	for {
		var missing []*runBatch
		for _, g := range groups {
			if g.o = s.cached(g.run); g.o == nil {
				missing = append(missing, g)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if len(refused) > 0 && time.Now().After(deadline) {
			return fmt.Errorf("lock run %s (and %d more): held by another orchestrator for over %s", refused[0], len(refused)-1, s.cfg.LockWait)
		}
		var err error
		if refused, err = s.lockAndLoad(ctx, missing); err != nil {
			return err
		}
		if len(refused) == 0 {
			continue // the next round checks they are all still held
		}
		s.letGo(ctx, groups)
		if err := clock.Sleep(ctx, jitter(wait)); err != nil {
			return err
		}
		wait = min(2*wait, lockRetryMax)
	}
}

// letGo forgets the cached state of groups' runs and releases their locks
// in one round trip.
func (s *Service) letGo(ctx context.Context, groups []*runBatch) {
	runs := make([]string, len(groups))
	for i, g := range groups {
		runs[i], g.o = g.run, nil
		delete(s.owned, g.run)
	}
	s.leases.releaseLocks(ctx, s.leases.take(runs))
}

// jitter spreads d over [d/2, 3d/2), so that orchestrators backing off from
// each other's locks do not retry in step.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d)
}

// lockAndLoad asks for the locks of groups' runs in one round trip and
// caches the runs it got; it returns the runs it did not get.
func (s *Service) lockAndLoad(ctx context.Context, groups []*runBatch) (refused []string, err error) {
	reqs := make([]statestore.LockRequest, len(groups))
	for i, g := range groups {
		reqs[i] = statestore.LockRequest{
			HeldLock: statestore.HeldLock{Run: g.run, Value: lockValue(s.cfg.ID)},
			Prev:     s.leases.value(g.run), Light: g.events[0].start != nil,
		}
		if s.cfg.StableID {
			reqs[i].TakeOver = s.cfg.ID
		}
	}
	got, err := s.keys.AcquireRuns(ctx, s.rdb, reqs, s.cfg.LockTTL)
	if err != nil {
		return nil, err
	}
	for i, a := range got {
		if a.Fence == 0 {
			refused = append(refused, reqs[i].Run)
			continue
		}
		s.leases.add(reqs[i].Run, reqs[i].Value)
		groups[i].acquired = true
		takenOver := s.fences.takeover(reqs[i].Run, a.Fence, time.Now())
		o, err := s.load(ctx, reqs[i].Run, a)
		if err != nil {
			return nil, err
		}
		o.lock = reqs[i].Value
		o.takenOver = takenOver && o.run != nil
		s.metrics.takeover(o.takenOver)
		s.owned[reqs[i].Run] = o
	}
	return refused, nil
}

// load turns what AcquireRuns read into the cached run: nothing for a run
// not started yet (a start creates it), the restored run otherwise.
func (s *Service) load(ctx context.Context, run string, a statestore.Acquired) (*owned, error) {
	o := &owned{fence: a.Fence}
	stored := a.Stored
	if a.NeedsLoad {
		var err error
		if stored, err = s.keys.LoadRun(ctx, s.rdb, run); err != nil {
			return nil, err
		}
	}
	o.trace = stored.Fields[records.FieldTrace]
	if !stored.Started() {
		return o, nil // unknown, or recorded as pending by the api: a start creates it
	}
	r, err := s.restore(ctx, run, stored)
	if err != nil {
		return nil, err
	}
	o.run, o.loaded = r, true
	return o, nil
}

// restore rebuilds a core.Run from its stored hashes.
func (s *Service) restore(ctx context.Context, id string, st statestore.StoredRun) (*core.Run, error) {
	f := st.Fields
	ver, _ := strconv.Atoi(f[records.FieldVersion])
	plan, err := s.plans.get(ctx, f[records.FieldWorkflow], ver)
	if err != nil {
		return nil, fmt.Errorf("restore run %s: %w", id, err)
	}
	defs := plan.Graph.Def.Nodes
	nodes := make([]records.NodeRecord, len(defs))
	outputs := make([]json.RawMessage, len(defs))
	for i, d := range defs {
		raw, ok := st.Nodes[d.ID]
		if !ok { // never changed since the run began
			nodes[i] = core.InitialRecord(plan, i)
		} else if nodes[i], err = records.DecodeNodeRecord([]byte(raw)); err != nil {
			return nil, fmt.Errorf("restore run %s node %s: %w", id, d.ID, err)
		}
		o, ok := st.Outputs[d.ID]
		outputs[i] = records.OutputOf(nodes[i].State, o, ok)
	}
	r := core.Restore(id, ver, plan, nodes, outputs)
	if err := s.restoreFanOuts(ctx, r); err != nil {
		return nil, err
	}
	r.Status = records.RunStatus(f[records.FieldStatus])
	r.Input = json.RawMessage(f[records.FieldInput])
	r.CreatedAt = atoi64(f[records.FieldCreated])
	r.StartedAt = atoi64(f[records.FieldStarted])
	r.FinishedAt = atoi64(f[records.FieldFinished])
	r.Error = f[records.FieldError]
	r.Seq = uint64(atoi64(f[records.FieldSeq]))
	r.Paused = f[records.FieldPaused] == "1"
	r.Held = f[records.FieldHeld] == "1"
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
	s.fences.prune(now)
	for run := range s.owned {
		if !s.leases.held(run) {
			delete(s.owned, run)
		}
	}
}

// retire forgets an ended run's cached state and lets its lock go at the
// next lease tick: a late event for it (a duplicate result) takes the lock
// again and reloads.
func (s *Service) retire(run string) {
	delete(s.owned, run)
	s.leases.retire(run)
}

// disownAll forgets every cached run and releases every lock (after a
// failed batch, when the cache may no longer match what Redis holds).
func (s *Service) disownAll(ctx context.Context) {
	clear(s.owned)
	s.leases.releaseAll(ctx)
}
