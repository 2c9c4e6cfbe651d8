package workload

import (
	"context"
	"fmt"
	"math"

	"github.com/braidhq/braid/bench/internal/floor"
	"github.com/braidhq/braid/bench/internal/stats"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
)

// floorInflight is how many records circulate in the throughput floor.
const floorInflight = 1000

// TransportFloor measures the floor loop (package floor) on the stack's
// broker and Redis, and records the medians in e.Floor for the ratios of
// every later line.
func TransportFloor(ctx context.Context, e *Env) (Line, error) {
	l := Line{Workload: "transport_floor", N: e.Sizes.FloorHops, Runs: e.Reps,
		Target: "reference: what one hop costs on this broker and Redis",
		Method: "a minimal loop on the services' eventbus settings: fetch a record from a kfake topic, HSET one node-record-sized field, publish the next record (RequireAll), commit. " +
			"p50_ms/p99_ms: client-clock gap between consecutive consumes of one record circulating alone (n sequential hops); wall_ms: those n hops; " +
			"tasks_per_s: hops per second with 1000 records circulating, batches of up to 512 per fetch, one pipelined HSET round trip and one publish per batch; " +
			"later lines' ratios divide by the same floor measured again, briefly, right before each of them (their floor_hop_p50_ms and floor_hops_per_s), " +
			"or by this line's pooled p50 and median tasks_per_s when that measurement failed; " + pooledMethod}
	var sets [][]float64
	var wall, tput []float64
	for rep := range e.Reps {
		gaps, hps, err := floorOnce(ctx, e, e.Sizes.FloorHops, e.Sizes.FloorMessages)
		if err != nil {
			return l, fmt.Errorf("transport floor rep %d: %w", rep+1, err)
		}
		sets, wall, tput = append(sets, gaps), append(wall, sum(gaps)), append(tput, hps)
		e.Log.Info("transport floor", "rep", rep+1, "p50_ms", stats.Percentile(gaps, 50), "p99_ms", stats.Percentile(gaps, 99), "hops_per_s", math.Round(hps))
	}
	l.setPooled("", sets)
	l.set("wall_ms", wall)
	l.set("tasks_per_s", tput)
	l.set("floor_ratio", repeat(1.0, e.Reps))
	e.RefFloor = FloorFigures{HopP50Ms: l.Figures["p50_ms"].Median, HopP99Ms: l.Figures["p99_ms"].Median, HopsPerS: l.Figures["tasks_per_s"].Median}
	e.Floor = e.RefFloor
	return l, nil
}

// floorOnce measures the floor loop once on a topic and hash of its own:
// hops sequential hops (their gaps, ms) and msgs hops batched (hops/s).
func floorOnce(ctx context.Context, e *Env, hops, msgs int) ([]float64, float64, error) {
	id, err := uniqueTag()
	if err != nil {
		return nil, 0, err
	}
	bus := eventbus.Config{Brokers: e.Infra.BrokerList(), TopicPrefix: "floor" + id + "."}
	lp, err := floor.Open(ctx, bus, e.Redis, statestore.Keys{Namespace: "floor" + id + ":"})
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = lp.Close() }()
	gaps, err := lp.Latency(ctx, hops)
	if err != nil {
		return nil, 0, err
	}
	hps, err := lp.Throughput(ctx, msgs, min(floorInflight, msgs))
	return gaps, hps, err
}

// lineFloor measures the floor again, briefly, right before a workload
// (one repetition of Sizes.LineFloorHops sequential hops and
// Sizes.LineFloorMessages batched): this machine's speed moves within
// minutes, so each line's ratios divide by the floor of its own minute.
func lineFloor(ctx context.Context, e *Env) (FloorFigures, error) {
	gaps, hps, err := floorOnce(ctx, e, e.Sizes.LineFloorHops, e.Sizes.LineFloorMessages)
	if err != nil {
		return FloorFigures{}, fmt.Errorf("line floor: %w", err)
	}
	return FloorFigures{HopP50Ms: stats.Percentile(gaps, 50), HopP99Ms: stats.Percentile(gaps, 99), HopsPerS: hps}, nil
}

// lineFloorMethod says, in the method of a line after the floor's, which
// floor its ratios divided by: lineFloor's, or (failed, the error) the
// transport_floor line's.
func lineFloorMethod(sz Sizes, failed error) string {
	if failed != nil {
		return fmt.Sprintf("floor_hop_p50_ms, floor_hops_per_s: the transport_floor line's, which this line's floor_ratio divides by "+
			"(measuring the floor again right before this workload failed: %v)", failed)
	}
	return fmt.Sprintf("floor_hop_p50_ms, floor_hops_per_s: the transport floor measured again right before this workload "+
		"(one repetition, %d sequential hops and %d batched, as transport_floor does it), which this line's floor_ratio divides by", sz.LineFloorHops, sz.LineFloorMessages)
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

func repeat(x float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = x
	}
	return out
}
