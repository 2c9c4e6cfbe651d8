package workload

import (
	"context"
	"fmt"
)

// costForeachSmallItems is the item count of the small runs: with the
// items node and the join, 10 completions per run.
const costForeachSmallItems = costSmallNodes - 2

// CompletionCostForeach compares the orchestrator's CPU time per
// completion in one run of CostForeachItems foreach instances (+ the node
// that makes the items, + a join) with the same per completion in runs of
// the same definition over 8 items (10 completions each), CostNodes/10 of
// them started at once.
func CompletionCostForeach(ctx context.Context, e *Env) (Line, error) {
	n := e.Sizes.CostForeachItems
	large := n + 2
	smallRuns := max(e.Sizes.CostNodes/costSmallNodes, 1)
	l := Line{Workload: fmt.Sprintf("completion_cost_foreach_%d", n), N: large, Runs: e.Reps,
		Target: "≤ 1.5× at 100,000 vs 10 completions",
		Method: fmt.Sprintf("cost_ratio: orchestrator CPU (utime+stime from /proc, 10 ms ticks) per completion in ONE run of a transform node making "+
			"%d items, a noop foreach over them and a noop join (%d completions: the items node, every instance, the join), divided by the same "+
			"per completion in %d runs of that definition over %d items (%d completions each) started at once; "+
			"cpu_us_per_node_large/_small: those costs; wall_ms: the large run, created → finished", n, large, smallRuns,
			costForeachSmallItems, costSmallNodes)}
	s, err := e.startSession(ctx, l.Workload, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	big, err := s.api.Register(ctx, foreachJoinDef("large", n))
	if err != nil {
		return l, err
	}
	little, err := s.api.Register(ctx, foreachJoinDef("small", costForeachSmallItems))
	if err != nil {
		return l, err
	}
	var lcost, scost, ratio, wall []float64
	for rep := range e.Reps {
		var w float64
		lc, err := s.cpuPerNode(large, func() error {
			r, err := s.runOnce(ctx, big, foreachTimeout)
			w, _ = r.WallMs()
			return err
		})
		if err != nil {
			return l, fmt.Errorf("%s rep %d large: %w", l.Workload, rep+1, err)
		}
		sc, err := s.cpuPerNode(smallRuns*costSmallNodes, func() error {
			ids, err := s.startMany(ctx, little, smallRuns)
			if err == nil {
				_, err = s.waitAll(ctx, ids, bigRunTimeout)
			}
			return err
		})
		if err != nil {
			return l, fmt.Errorf("%s rep %d small: %w", l.Workload, rep+1, err)
		}
		lcost, scost, ratio, wall = append(lcost, lc), append(scost, sc), append(ratio, lc/sc), append(wall, w)
		e.Log.Info(l.Workload, "rep", rep+1, "cpu_us_large", lc, "cpu_us_small", sc, "wall_ms", w)
	}
	l.set("wall_ms", wall)
	l.set("cost_ratio", ratio)
	l.set("cpu_us_per_node_large", lcost)
	l.set("cpu_us_per_node_small", scost)
	return l, nil
}
