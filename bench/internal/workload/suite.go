package workload

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Workload runs one benchmark and returns its line.
type Workload func(ctx context.Context, e *Env) (Line, error)

// Entry is a named workload of the suite.
type Entry struct {
	// Name selects the workload with BENCH_ONLY / -only.
	Name string
	Run  Workload
}

// Suite lists the workloads in the order they run; the transport floor
// comes first because every later ratio divides by it.
func Suite(sz Sizes) []Entry {
	return []Entry{
		{"floor", TransportFloor},
		{"chain_hop", ChainHops},
		{"single", SingleNode(true)},
		{"single_poll", SingleNode(false)},
		{"fanout", FanOutJoin(sz.FanOut, "≤ 200 ms wall")},
		{"chain", Chain(sz.Chain, "≤ 1.5 s wall")},
		{"fanout_big", FanOutJoin(sz.BigFanOut, "≤ 1.5 s wall")},
		{"diamond", Diamonds},
		{"scale_workers", ScaleWorkers},
		{"redis", RedisPerNode},
		{"inflight", InFlight},
		{"cost", CompletionCost},
		{"cost_foreach", CompletionCostForeach},
		{"resources", Resources},
		{"foreach", Foreach},
		{"tracing", Tracing},
	}
}

// RunAll runs the entries selected by only (comma-separated names; empty =
// all; the floor always runs) and hands each line to emit. A failed
// workload yields a line with its error, and RunAll goes on; it returns an
// error naming the failed workloads.
func RunAll(ctx context.Context, e *Env, entries []Entry, only string, emit func(Line)) error {
	var failed []string
	for _, en := range entries {
		if !selected(en.Name, only) {
			continue
		}
		t0 := time.Now()
		e.Log.Info("workload start", "name", en.Name)
		l, err := en.Run(ctx, e)
		if err != nil {
			l.Error = err.Error()
			failed = append(failed, en.Name)
			e.Log.Error("workload failed", "name", en.Name, "err", err)
		}
		e.Log.Info("workload done", "name", en.Name, "took", time.Since(t0).Round(time.Millisecond))
		emit(e.tag(l))
		if ctx.Err() != nil {
			break
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("workloads failed: %s", strings.Join(failed, ", "))
	}
	return ctx.Err()
}

// tag marks l with the setup it ran on, when that is not the default.
func (e *Env) tag(l Line) Line {
	if e.Setup != "" {
		l.Setup = e.Setup
		l.Method += ". " + e.SetupNote
	}
	return l
}

func selected(name, only string) bool {
	if only == "" || name == "floor" {
		return true
	}
	for _, o := range strings.Split(only, ",") {
		if strings.TrimSpace(o) == name {
			return true
		}
	}
	return false
}
