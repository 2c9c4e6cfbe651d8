package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/braidhq/braid/bench/internal/stats"
)

// Waits of the 1-node runs.
const (
	singlePoll = 250 * time.Microsecond // pause between GETs of the polling variant
	singleWait = 10 * time.Second       // ?wait= of the start-and-wait variant
)

// SingleNode starts SingleRuns one-node runs one after another, per
// repetition, and reports the latency from sending the run request to
// holding the ended run. With wait the run is requested with ?wait= and the
// answer is the ended run; without, the run is requested and then read with
// GET /runs/{id} every singlePoll until it has ended.
func SingleNode(wait bool) Workload {
	return func(ctx context.Context, e *Env) (Line, error) {
		return singleNode(ctx, e, wait)
	}
}

func singleNode(ctx context.Context, e *Env, wait bool) (Line, error) {
	n := e.Sizes.SingleRuns
	l := Line{Workload: "single_node_latency", N: n, Runs: e.Reps,
		Method: fmt.Sprintf("n sequential 1-node noop runs per repetition; p50_ms/p99_ms: bench clock from sending POST /workflows/{name}/runs?wait=%s "+
			"to holding its answer (its last byte read; the bench decodes it afterwards), the run as GET /runs/{id} returns it, succeeded (the api answers once the orchestrator announces the run's end); wall_ms: the n runs; "+
			"tasks_per_s: n / wall; floor_ratio: p50 / (3 × floor hop p50) for the three messages start, dispatch, result (per repetition); %s", singleWait, pooledMethod)}
	if !wait {
		l.Workload, l.Target = "single_node_latency_poll", "(the same as single_node_latency, read by polling)"
		l.Method = fmt.Sprintf("as single_node_latency, but the run is requested without wait and read with GET /runs/{id} "+
			"every %s (a kernel sleep: a Go timer would wait about 1 ms) until it answers succeeded; p50_ms/p99_ms from sending the POST to that answer; %s", singlePoll, pooledMethod)
	} else {
		l.setGoals("", goal{figure: "p50_ms", atMost: true, limit: 1.5}, goal{figure: "p99_ms", atMost: true, limit: 3})
	}
	s, err := e.startSession(ctx, l.Workload, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	wf, err := s.api.Register(ctx, chainDef("single", 1))
	if err != nil {
		return l, err
	}
	one := s.acceptToReadable
	if wait {
		one = s.startAndWait
	}
	var sets [][]float64
	var p50, wall, rss []float64
	for rep := range e.Reps {
		s.orchestratorPeak()
		lat := make([]float64, 0, n)
		t0 := time.Now()
		for range n {
			ms, err := one(ctx, wf)
			if err != nil {
				return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
			}
			lat = append(lat, ms)
		}
		wall = append(wall, float64(time.Since(t0).Microseconds())/1000)
		sets, p50, rss = append(sets, lat), append(p50, stats.Percentile(lat, 50)), append(rss, s.rssMB())
		e.Log.Info(l.Workload, "rep", rep+1, "p50_ms", p50[rep], "p99_ms", stats.Percentile(lat, 99))
	}
	l.setPooled("", sets)
	l.set("wall_ms", wall)
	l.set("tasks_per_s", perSecond(float64(n), wall))
	l.set("rss_mb", rss)
	l.set("floor_ratio", ratios(p50, 3*e.Floor.HopP50Ms))
	return l, nil
}

// startAndWait requests one run with ?wait= and returns the milliseconds
// until the answer, which must be the succeeded run.
func (s *session) startAndWait(ctx context.Context, wf string) (float64, error) {
	_, ms, err := s.runWaited(ctx, wf, singleWait)
	return ms.ms, err
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
