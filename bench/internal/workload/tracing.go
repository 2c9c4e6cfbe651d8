package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/braidhq/braid/bench/internal/stack"
	"github.com/braidhq/braid/bench/internal/stats"
	"github.com/braidhq/braid/pkg/testkit/otlpsink"
)

// Tracing measures what tracing costs: the 1-node ?wait= latency and the
// sustained diamond load, on a fresh stack with tracing off (the default)
// and on another exporting every span over OTLP/HTTP to a receiver in the
// bench process, which counts them.
func Tracing(ctx context.Context, e *Env) (Line, error) {
	n, c, d := e.Sizes.SingleRuns, e.Sizes.Diamonds, e.Sizes.Sustain/2
	l := Line{Workload: "tracing", N: n, Runs: e.Reps, Target: "off: within noise of single_node_latency and diamond; on: reported",
		Method: fmt.Sprintf("per mode (off: no OTEL_* set; on: OTEL_EXPORTER_OTLP_ENDPOINT to an OTLP/HTTP receiver in the bench, default batching) a fresh stack; "+
			"per repetition n sequential 1-node ?wait= runs (p50_ms_*/p99_ms_*, bench clock) then %d 10-node diamond runs kept in flight for %s "+
			"(tasks_per_s_*: nodes of runs finished inside the window / window; in_flight_at_end_*: diamond runs in flight when the window closed); "+
			"spans_on: spans the receiver got from the traced stack, counted after its services stopped (which flushes them); "+
			"p50_ms_*/p99_ms_* are the 1-node latencies; %s", c, d, pooledMethod)}
	sink, err := otlpsink.New(false)
	if err != nil {
		return l, err
	}
	defer sink.Close()
	for _, mode := range []struct {
		name string
		env  []string
	}{{"off", nil}, {"on", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.URL}}} {
		sets, tput, late, err := tracingMode(ctx, e, mode.name, mode.env, n, c, d)
		if err != nil {
			return l, err
		}
		l.setPooled("_"+mode.name, sets)
		l.set("tasks_per_s_"+mode.name, tput)
		l.set("in_flight_at_end_"+mode.name, late)
	}
	l.set("spans_on", []float64{float64(sink.Count())})
	if sink.Count() == 0 {
		return l, fmt.Errorf("tracing on: the receiver got no span")
	}
	return l, nil
}

// tracingMode runs the tracing workload's measurements on one fresh stack
// with env added to every service: per repetition the 1-node latencies,
// the diamond load's tasks/s and its runs in flight at the window's end.
func tracingMode(ctx context.Context, e *Env, mode string, env []string, n, c int, d time.Duration) (sets [][]float64, tput, late []float64, err error) {
	s, err := e.startSessionWith(ctx, "tracing_"+mode, stack.Options{Workers: e.Sizes.WorkerProcesses, Env: env})
	if err != nil {
		return nil, nil, nil, err
	}
	defer s.close()
	single, err := s.api.Register(ctx, chainDef("single", 1))
	if err != nil {
		return nil, nil, nil, err
	}
	diamond, err := s.api.Register(ctx, fanOutDef("diamond", diamondNodes))
	if err != nil {
		return nil, nil, nil, err
	}
	for rep := range e.Reps {
		lat := make([]float64, 0, n)
		for range n {
			ms, err := s.startAndWait(ctx, single)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("tracing %s rep %d: %w", mode, rep+1, err)
			}
			lat = append(lat, ms)
		}
		runs, err := s.sustain(ctx, diamond, c, d)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("tracing %s rep %d: %w", mode, rep+1, err)
		}
		sets, late = append(sets, lat), append(late, float64(len(runs.late)))
		tput = append(tput, runs.tasksPerS(diamondNodes, d))
		e.Log.Info("tracing", "mode", mode, "rep", rep+1, "p50_ms", stats.Percentile(lat, 50), "p99_ms", stats.Percentile(lat, 99), "tasks_per_s", tput[rep])
	}
	return sets, tput, late, nil
}
