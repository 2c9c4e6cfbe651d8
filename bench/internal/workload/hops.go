package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/braidhq/braid/bench/internal/stats"
	"github.com/braidhq/braid/pkg/testkit/procstack"
)

// tailLiveTimeout bounds waiting for the dispatch tail to see a whole run.
const tailLiveTimeout = 60 * time.Second

// ChainHops runs a chain of noop nodes Reps times and reports per-hop latency.
func ChainHops(ctx context.Context, e *Env) (Line, error) {
	n := e.Sizes.HopChain
	l := Line{Workload: fmt.Sprintf("chain_%d_hop", n), N: n, Runs: e.Reps, Target: "p50 ≤ 1 ms, p99 ≤ 5 ms per hop",
		Method: "p50_ms/p99_ms: per hop, the gaps between consecutive nodes' task.dispatch records as first seen by a read-only Kafka consumer " +
			"(bench clock, µs; one hop = worker claims, runs and reports node i, orchestrator stores it and dispatches node i+1); " +
			"hop_mean_ms: wall_ms / nodes; wall_ms: run created_at → finished_at (api, ms); tasks_per_s: nodes / wall; " +
			"rss_mb: orchestrator VmHWM during the run; redis_bytes_per_node: MEMORY USAGE of the run's keys without outputs / nodes; " +
			"floor_ratio: p50 / (2 × floor hop p50), a hop being two messages"}
	s, err := e.startSession(ctx, l.Workload, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	wf, err := s.api.Register(ctx, chainDef("chain", n))
	if err != nil {
		return l, err
	}
	tail, err := startTail(ctx, s.bus, "braid-bench-tail")
	if err != nil {
		return l, err
	}
	defer tail.close()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = nodeID(i)
	}
	// A first run proves the tail is live: later arrivals are real time.
	if err := s.tailedRun(ctx, tail, wf, ids, nil); err != nil {
		return l, fmt.Errorf("%s warm-up: %w", l.Workload, err)
	}
	var p50, p99, wall, mean, rss, mem []float64
	for rep := range e.Reps {
		s.orchestratorPeak()
		var gaps []float64
		r, err := s.tailedRunGaps(ctx, tail, wf, ids, &gaps)
		if err != nil {
			return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
		}
		w, _ := r.WallMs()
		bpn, err := s.runBytesPerNode(ctx, r.ID, n)
		if err != nil {
			return l, err
		}
		p50, p99, wall = append(p50, stats.Percentile(gaps, 50)), append(p99, stats.Percentile(gaps, 99)), append(wall, w)
		mean, rss, mem = append(mean, w/float64(n)), append(rss, s.rssMB()), append(mem, bpn)
		e.Log.Info(l.Workload, "rep", rep+1, "p50_ms", p50[rep], "p99_ms", p99[rep], "wall_ms", w)
	}
	l.set("p50_ms", p50)
	l.set("p99_ms", p99)
	l.set("wall_ms", wall)
	l.set("tasks_per_s", perSecond(float64(n), wall))
	l.set("rss_mb", rss)
	l.set("redis_bytes_per_node", mem)
	l.set("floor_ratio", ratios(p50, 2*e.Floor.HopP50Ms))
	l.set("hop_mean_ms", mean)
	return l, nil
}

// tailedRunGaps runs wf and returns the gaps between its nodes' dispatches.
func (s *session) tailedRunGaps(ctx context.Context, tail *dispatchTail, wf string, ids []string, gaps *[]float64) (runResult, error) {
	var r runResult
	err := s.tailedRun(ctx, tail, wf, ids, func(res runResult, at []time.Time) {
		r = res
		xs := make([]float64, len(at))
		for i, t := range at {
			xs[i] = float64(t.Sub(at[0]).Microseconds()) / 1000
		}
		*gaps = stats.Diffs(xs)
	})
	return r, err
}

// tailedRun runs wf to success, waits until the tail saw every node in ids
// and hands both to got (when non-nil).
func (s *session) tailedRun(ctx context.Context, tail *dispatchTail, wf string, ids []string, got func(runResult, []time.Time)) error {
	r, err := s.runOnce(ctx, wf, warmTimeout)
	if err != nil {
		return err
	}
	var at []time.Time
	err = procstack.Poll(tailLiveTimeout, pollEvery, func() (bool, error) {
		var ok bool
		at, ok = tail.arrivals(r.ID, ids)
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("dispatch tail did not see every node of run %s: %w", r.ID, err)
	}
	if got != nil {
		got(r, at)
	}
	return nil
}

// perSecond returns count / (ms/1000) for each of ms.
func perSecond(count float64, ms []float64) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = count / (m / 1000)
	}
	return out
}
