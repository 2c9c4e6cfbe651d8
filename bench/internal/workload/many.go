package workload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/testkit/procstack"
	"github.com/redis/go-redis/v9"
)

// Settings of the many-runs helpers.
const (
	starters     = 32                    // goroutines starting runs over HTTP
	statePoll    = 50 * time.Millisecond // between reads of in-flight runs' states
	stateChunk   = 2000                  // run hashes read per pipeline
	drainTimeout = 3 * time.Minute       // waiting for runs started before a window closed
)

// runState is a run's status and times (ms) as stored in its run hash.
type runState struct {
	id, status        string
	created, finished int64
}

func (r runState) terminal() bool {
	return r.status == "succeeded" || r.status == "failed" || r.status == "cancelled"
}

// latencyMs is finished − created, in ms.
func (r runState) latencyMs() float64 { return float64(r.finished - r.created) }

// runStates reads status, created and finished of each run hash with
// pipelined HMGETs (read-only).
func (s *session) runStates(ctx context.Context, ids []string) ([]runState, error) {
	out := make([]runState, 0, len(ids))
	for from := 0; from < len(ids); from += stateChunk {
		chunk := ids[from:min(from+stateChunk, len(ids))]
		pipe := s.rdb.Pipeline()
		for _, id := range chunk {
			pipe.HMGet(ctx, s.keys.Run(id), records.FieldStatus, records.FieldCreated, records.FieldFinished)
		}
		cmds, err := pipe.Exec(ctx)
		if err != nil {
			return nil, fmt.Errorf("read %d run states: %w", len(chunk), err)
		}
		for i, c := range cmds {
			v := c.(*redis.SliceCmd).Val()
			out = append(out, runState{id: chunk[i], status: str(v[0]), created: ms(v[1]), finished: ms(v[2])})
		}
	}
	return out, nil
}

// endedStates returns the states of those of ids that left the
// active-runs index (statestore.Keys.ActiveRunsOf: a run is in it from
// its pending write until the write that ends it, which removes it in
// the same pipeline, after the run hash): one ZMSCORE per index shard
// and chunk, then HMGETs of the absent runs only. Reading every in-flight
// run's hash each poll (runStates) cost the sustained load's Redis about
// 15,000 HMGETs a second at 1,000 runs in flight — load the product under
// test does not have. A run absent from the index is not necessarily
// ended (a refused write's index change): the caller reads its status.
func (s *session) endedStates(ctx context.Context, ids []string) ([]runState, error) {
	byShard := map[string][]string{}
	for _, id := range ids {
		k := s.keys.ActiveRunsOf(id)
		byShard[k] = append(byShard[k], id)
	}
	pipe := s.rdb.Pipeline()
	type ask struct {
		ids []string
		cmd *redis.FloatSliceCmd
	}
	var asks []ask
	for key, members := range byShard {
		for from := 0; from < len(members); from += stateChunk {
			chunk := members[from:min(from+stateChunk, len(members))]
			asks = append(asks, ask{chunk, pipe.ZMScore(ctx, key, chunk...)})
		}
	}
	if len(asks) == 0 {
		return nil, nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("look up %d runs in the active-runs index: %w", len(ids), err)
	}
	var gone []string
	for _, a := range asks {
		for i, score := range a.cmd.Val() {
			if score == 0 { // ZMSCORE's nil: not in the index (scores are creation times)
				gone = append(gone, a.ids[i])
			}
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	return s.runStates(ctx, gone)
}

// readLayout sets the session's index shard count to the one the stack
// recorded (statestore.Keys.Layout), so that ActiveRunsOf names the shard
// the services write: more than one on a Redis Cluster.
func (s *session) readLayout(ctx context.Context) error {
	v, err := s.rdb.HGet(ctx, s.keys.Layout(), "index_shards").Result()
	if err != nil {
		return fmt.Errorf("read the index layout %s: %w", s.keys.Layout(), err)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("index layout %s: index_shards %q", s.keys.Layout(), v)
	}
	s.keys.Shards = n
	return nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func ms(v any) int64 {
	n, _ := strconv.ParseInt(str(v), 10, 64)
	return n
}

// startMany starts count runs of wf from starters goroutines and returns
// their ids.
func (s *session) startMany(ctx context.Context, wf string, count int) ([]string, error) {
	ids := make([]string, count)
	errs := make([]error, starters)
	next := make(chan int, count)
	for i := range count {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for g := range starters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				id, err := s.api.Start(ctx, wf)
				if err != nil {
					errs[g] = err
					return
				}
				ids[i] = id
			}
		}()
	}
	wg.Wait()
	return ids, errors.Join(errs...)
}

// waitAll polls the runs until every one is terminal (or within passes)
// and requires they all succeeded.
func (s *session) waitAll(ctx context.Context, ids []string, within time.Duration) ([]runState, error) {
	return s.waitAllEvery(ctx, ids, within, pollEvery)
}

// waitAllEvery is waitAll reading the states every every.
func (s *session) waitAllEvery(ctx context.Context, ids []string, within, every time.Duration) ([]runState, error) {
	var states []runState
	err := procstack.Poll(within, every, func() (bool, error) {
		var err error
		if states, err = s.runStates(ctx, ids); err != nil {
			return false, err
		}
		for _, r := range states {
			if !r.terminal() {
				return false, s.alive()
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("wait for %d runs: %w", len(ids), err)
	}
	return states, requireSucceeded(states)
}

// requireSucceeded names the first run that did not succeed.
func requireSucceeded(states []runState) error {
	for _, r := range states {
		if r.status != "succeeded" {
			return fmt.Errorf("run %s ended %s", r.id, r.status)
		}
	}
	return nil
}

// span is the first created to the last finished time of states, in ms.
func span(states []runState) float64 {
	if len(states) == 0 {
		return nanF()
	}
	lo, hi := states[0].created, states[0].finished
	for _, r := range states {
		lo, hi = min(lo, r.created), max(hi, r.finished)
	}
	return float64(hi - lo)
}
