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
			"cpu_us_per_node_large/_small: those costs; %s; wall_ms: the large run, created → finished", n, large, smallRuns,
			costForeachSmallItems, costSmallNodes, redisCostMethod)}
	return e.compareCost(ctx, l, costPair{large: foreachJoinDef("large", n), largeN: large, largeTimeout: foreachTimeout,
		small: foreachJoinDef("small", costForeachSmallItems), smallRuns: smallRuns})
}
