package workload

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/braidhq/braid/bench/internal/stack"
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
		{floorEntry, TransportFloor},
		{"chain_hop", ChainHops},
		{"single", SingleNode(true)},
		{"single_poll", SingleNode(false)},
		{"fanout", FanOutJoin(sz.FanOut, "≤ 200 ms wall")},
		{"chain", Chain(sz.Chain, "≤ 1.5 s wall (#6)", chainGoal)},
		{"fanout_big", FanOutJoin(sz.BigFanOut, "≤ 1.5 s wall (#6)", fanOutGoal)},
		{"diamond", Diamonds},
		{"scale_workers", ScaleWorkers},
		{"redis", RedisPerNode},
		{"inflight", InFlight},
		{"cost", CompletionCost},
		{"cost_foreach", CompletionCostForeach},
		{"resources", Resources},
		{"foreach", Foreach},
		{"tracing", Tracing},
		{"dev_single", OnDev(SingleNode(true))},
		{"dev_chain_hop", OnDev(ChainHops)},
		{"dev_fanout", OnDev(FanOutJoin(sz.FanOut, "≤ 200 ms wall"))},
		{"dev_fanout_big", OnDev(FanOutJoin(sz.BigFanOut, "≤ 1.5 s wall (#6)", fanOutGoal))},
		{"dev_diamond", OnDev(Diamonds)},
	}
}

// floorEntry names the transport floor's entry.
const floorEntry = "floor"

// Issue 20's goals of the wall-time lines (the others are set by their
// workloads): a chain at ≤ 0.8 ms per node of wall time at the client,
// and the 10,000-node fan-out + join in ≤ 0.3 s at the client.
var (
	chainGoal  = goal{figure: "client_ms_per_node", atMost: true, limit: 0.8}
	fanOutGoal = goal{figure: "client_wall_ms", atMost: true, limit: 300}
)

// devPrefix starts the names of the workloads that run on `braid dev`.
const devPrefix = "dev_"

// OnDev runs w on the dev setup: each session w starts is a fresh `braid
// dev` process instead of separate services on the bench's
// infrastructure, and its line is tagged "setup":"dev" with devNote added
// to its method.
func OnDev(w Workload) Workload {
	return func(ctx context.Context, e *Env) (Line, error) {
		d := *e
		d.dev = true
		if d.ProfilePath != "" {
			d.ProfilePath = DevProfilePath(d.ProfilePath)
		}
		l, err := w(ctx, &d)
		l.Setup = stack.SetupDev
		l.Method += ". " + devNote
		return l, err
	}
}

// DevProfilePath is where a dev-setup workload writes the CPU profile asked
// for at path (BENCH_PROFILE): "-dev" before its extension, so that
// diamond and dev_diamond in one bench keep both profiles.
func DevProfilePath(path string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-dev" + ext
}

// devNote is added to every dev-setup line's method.
var devNote = fmt.Sprintf("Setup dev: the product as a user runs it — one fresh `braid dev` process per workload (the built braid binary, a fresh data dir, "+
	"free loopback ports for --addr, --kafka-addr and --redis-addr, --worker-concurrency %[2]d as the separate-process workers "+
	"(also its default), every other flag at its default: %[1]d in-process workers, log level info), kfake inside that process and redis-server (AOF everysec, password) its child; "+
	"driven over its HTTP API with the key it generated (<data-dir>/api-key) and read over its Redis; stopped by PID (SIGTERM, SIGKILL after %[3]s). "+
	"rss_mb is the whole braid dev process's VmHWM (api, orchestrator, workers and kfake together); cpu_pct_braid_dev its CPU, cpu_pct_redis redis-server's; "+
	"floor_ratio divides by the transport floor measured on the bench's own `braid dev --only infra`",
	stack.DevWorkers, stack.DevConcurrency, stack.DevStopGrace)

// RunAll runs the entries selected by only (comma-separated names; empty =
// all; the floor always runs), each once the bench's Redis is not saving
// in the background (waitQuiet), and hands each line to emit. A failed
// workload yields a line with its error, and RunAll goes on; it returns an
// error naming the failed workloads.
func RunAll(ctx context.Context, e *Env, entries []Entry, only string, emit func(Line)) error {
	var failed []string
	for _, en := range entries {
		if !selected(en.Name, only) {
			continue
		}
		if e.Setup == stack.SetupCluster && only == "" && strings.HasPrefix(en.Name, devPrefix) {
			continue // the dev setup brings its own broker and Redis: name it to run it here
		}
		if waited, err := waitQuiet(ctx, e.Redis); err != nil {
			e.Log.Warn("redis still saving at the workload's start", "name", en.Name, "waited", waited.Round(time.Millisecond), "err", err)
		} else if waited > 100*time.Millisecond {
			e.Log.Info("waited for redis's background save", "name", en.Name, "waited", waited.Round(time.Millisecond))
		}
		var floorErr error
		after := en.Name != floorEntry && e.RefFloor.HopsPerS > 0
		if after {
			var f FloorFigures
			if f, floorErr = lineFloor(ctx, e); floorErr != nil {
				e.Floor = e.RefFloor
				e.Log.Warn("line floor failed: the line's ratios divide by the transport_floor line's", "name", en.Name, "err", floorErr)
			} else {
				e.Floor = f
				e.Log.Info("line floor", "name", en.Name, "p50_ms", f.HopP50Ms, "hops_per_s", math.Round(f.HopsPerS))
			}
		}
		t0 := time.Now()
		e.Log.Info("workload start", "name", en.Name)
		l, err := en.Run(ctx, e)
		if after && err == nil {
			l.setOnce("floor_hop_p50_ms", e.Floor.HopP50Ms)
			l.setOnce("floor_hops_per_s", math.Round(e.Floor.HopsPerS))
			l.Method += "; " + lineFloorMethod(e.Sizes, floorErr)
		}
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

// tag marks l with the setup it ran on, when that is not the default and
// the line names none of its own (the dev setup's).
func (e *Env) tag(l Line) Line {
	if e.Setup != "" && l.Setup == "" {
		l.Setup = e.Setup
		l.Method += ". " + e.SetupNote
	}
	return l
}

func selected(name, only string) bool {
	if only == "" || name == floorEntry {
		return true
	}
	for _, o := range strings.Split(only, ",") {
		if strings.TrimSpace(o) == name {
			return true
		}
	}
	return false
}
