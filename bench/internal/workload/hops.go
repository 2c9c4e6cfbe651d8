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

// ChainHops runs a chain of noop nodes Reps times and reports per-hop
// latency and the wall time at the client.
func ChainHops(ctx context.Context, e *Env) (Line, error) {
	n := e.Sizes.HopChain
	l := Line{Workload: fmt.Sprintf("chain_%d_hop", n), N: n, Runs: e.Reps,
		Method: "p50_ms/p99_ms: per hop, the gaps between consecutive nodes' task.dispatch records as first seen by a read-only Kafka consumer " +
			"(bench clock, µs; one hop = worker claims, runs and reports node i, orchestrator stores it and dispatches node i+1; n-1 gaps per run); " +
			"client_wall_ms: bench clock from sending POST /workflows/{name}/runs?wait= to holding its answer (its last byte read), the succeeded run, " +
			"in repetitions of their own (as many, after the tailed ones) with the tail closed: the tail is the bench's probe, a second consumer of every dispatch " +
			"on the same broker and cores, which a user's stack does not carry; client_wall_ms_tailed: the same clock in the tailed repetitions; " +
			"client_decode_ms: the bench's decoding of the untailed answers afterwards (encoding/json), not in client_wall_ms; " +
			"client_ms_per_node: client_wall_ms / nodes; hop_mean_ms: wall_ms / nodes; wall_ms: run created_at → finished_at (api, ms) of the tailed runs; tasks_per_s: nodes / wall; " +
			"rss_mb: orchestrator VmHWM during the run; " + redisBytesMethod + " (noop nodes without config: every output is null; the redis_bytes_per_node line has nodes with outputs); " +
			"floor_ratio: per-repetition p50 / (2 × floor hop p50), a hop being two messages; " + pooledMethod}
	l.setGoals("p50 ≤ 1 ms, p99 ≤ 5 ms per hop (#6)", goal{figure: "client_ms_per_node", atMost: true, limit: 0.8})
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
	defer tail.close() // closed early below; close is idempotent
	ids := make([]string, n)
	for i := range ids {
		ids[i] = nodeID(i)
	}
	// A first run proves the tail is live: later arrivals are real time.
	if _, err := s.tailedRunGaps(ctx, tail, wf, ids); err != nil {
		return l, fmt.Errorf("%s warm-up: %w", l.Workload, err)
	}
	var sets [][]float64
	var p50, wall, tailed, mean, rss, mem, memAll []float64
	for rep := range e.Reps {
		s.orchestratorPeak()
		h, err := s.tailedRunGaps(ctx, tail, wf, ids)
		if err != nil {
			return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
		}
		w, _ := h.run.WallMs()
		bpn, all, err := s.runBytesPerNode(ctx, h.run.ID, wf, n)
		if err != nil {
			return l, err
		}
		sets, p50, wall, tailed = append(sets, h.gaps), append(p50, stats.Percentile(h.gaps, 50)), append(wall, w), append(tailed, h.clientMs)
		mean, rss, mem, memAll = append(mean, w/float64(n)), append(rss, s.rssMB()), append(mem, bpn), append(memAll, all)
		e.Log.Info(l.Workload, "rep", rep+1, "p50_ms", p50[rep], "p99_ms", stats.Percentile(h.gaps, 99), "wall_ms", w, "client_wall_ms_tailed", h.clientMs)
	}
	tail.close()
	var client, decode []float64
	for rep := range e.Reps {
		_, ms, err := s.runWaited(ctx, wf, warmTimeout)
		if err != nil {
			return l, fmt.Errorf("%s untailed rep %d: %w", l.Workload, rep+1, err)
		}
		client, decode = append(client, ms.ms), append(decode, ms.decodeMs)
		e.Log.Info(l.Workload, "untailed rep", rep+1, "client_wall_ms", ms.ms)
	}
	l.setPooled("", sets)
	l.set("wall_ms", wall)
	l.set("tasks_per_s", perSecond(float64(n), wall))
	l.set("rss_mb", rss)
	l.set("redis_bytes_per_node", mem)
	l.set("floor_ratio", ratios(p50, 2*e.Floor.HopP50Ms))
	l.set("client_wall_ms", client)
	l.set("client_decode_ms", decode)
	l.set("client_ms_per_node", perNode(client, n))
	l.set("client_wall_ms_tailed", tailed)
	l.set("hop_mean_ms", mean)
	l.set("redis_bytes_per_node_all", memAll)
	return l, nil
}

// hopRun is one tailed chain run: the run, its client wall (ms) and the
// gaps between its nodes' dispatches (ms).
type hopRun struct {
	run      runResult
	clientMs float64
	gaps     []float64
}

// tailedRunGaps runs wf to success with ?wait=, timing it at the client,
// waits until the tail saw every node in ids and returns the gaps between
// their dispatches.
func (s *session) tailedRunGaps(ctx context.Context, tail *dispatchTail, wf string, ids []string) (hopRun, error) {
	r, ms, err := s.runWaited(ctx, wf, warmTimeout)
	if err != nil {
		return hopRun{}, err
	}
	var at []time.Time
	err = procstack.Poll(tailLiveTimeout, pollEvery, func() (bool, error) {
		var ok bool
		at, ok = tail.arrivals(r.ID, ids)
		return ok, nil
	})
	if err != nil {
		return hopRun{}, fmt.Errorf("dispatch tail did not see every node of run %s: %w", r.ID, err)
	}
	xs := make([]float64, len(at))
	for i, t := range at {
		xs[i] = float64(t.Sub(at[0]).Microseconds()) / 1000
	}
	return hopRun{run: r, clientMs: ms.ms, gaps: stats.Diffs(xs)}, nil
}

// perNode divides each of ms by nodes.
func perNode(ms []float64, nodes int) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = m / float64(nodes)
	}
	return out
}

// perSecond returns count / (ms/1000) for each of ms.
func perSecond(count float64, ms []float64) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = count / (m / 1000)
	}
	return out
}
