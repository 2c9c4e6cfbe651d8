package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/braidhq/braid/bench/internal/stats"
)

// singlePoll is the pause between GETs while waiting for a 1-node run.
const singlePoll = 250 * time.Microsecond

// SingleNode starts SingleRuns one-node runs one after another, per
// repetition, and reports accept → result readable latency.
func SingleNode(ctx context.Context, e *Env) (Line, error) {
	n := e.Sizes.SingleRuns
	l := Line{Workload: "single_node_latency", N: n, Runs: e.Reps, Target: "p50 ≤ 2 ms, p99 ≤ 10 ms",
		Method: fmt.Sprintf("n sequential 1-node noop runs per repetition; p50_ms/p99_ms: bench clock from sending POST /workflows/{name}/runs "+
			"to the first GET /runs/{id} answering succeeded, GETs repeated every %s (a kernel sleep: a Go timer would wait about 1 ms) plus their own round trip; wall_ms: the n runs; "+
			"tasks_per_s: n / wall; floor_ratio: p50 / (3 × floor hop p50) for the three messages start, dispatch, result", singlePoll)}
	s, err := e.startSession(ctx, l.Workload, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	wf, err := s.api.Register(ctx, chainDef("single", 1))
	if err != nil {
		return l, err
	}
	var p50, p99, wall, rss []float64
	for rep := range e.Reps {
		s.orchestratorPeak()
		lat := make([]float64, 0, n)
		t0 := time.Now()
		for range n {
			ms, err := s.acceptToReadable(ctx, wf)
			if err != nil {
				return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
			}
			lat = append(lat, ms)
		}
		wall = append(wall, float64(time.Since(t0).Microseconds())/1000)
		p50, p99, rss = append(p50, stats.Percentile(lat, 50)), append(p99, stats.Percentile(lat, 99)), append(rss, s.rssMB())
		e.Log.Info(l.Workload, "rep", rep+1, "p50_ms", p50[rep], "p99_ms", p99[rep])
	}
	l.set("p50_ms", p50)
	l.set("p99_ms", p99)
	l.set("wall_ms", wall)
	l.set("tasks_per_s", perSecond(float64(n), wall))
	l.set("rss_mb", rss)
	l.set("floor_ratio", ratios(p50, 3*e.Floor.HopP50Ms))
	return l, nil
}

// acceptToReadable starts one run and polls it until it succeeded,
// returning the elapsed milliseconds.
func (s *session) acceptToReadable(ctx context.Context, wf string) (float64, error) {
	t0 := time.Now()
	id, err := s.api.Start(ctx, wf)
	if err != nil {
		return 0, err
	}
	r, err := s.api.WaitRun(ctx, id, warmTimeout, singlePoll)
	if err != nil {
		return 0, err
	}
	ms := float64(time.Since(t0).Microseconds()) / 1000
	if r.Status != "succeeded" {
		return 0, fmt.Errorf("run %s ended %s: %s", id, r.Status, r.Error)
	}
	return ms, nil
}
