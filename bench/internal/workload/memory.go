package workload

import (
	"context"
	"fmt"
)

// RedisPerNode runs a MemNodes-node fan-out + join Reps times and counts
// the Redis memory its finished run keeps per node, outputs excluded, and
// everything a run of the same shape costs when every node has an output.
func RedisPerNode(ctx context.Context, e *Env) (Line, error) {
	n := e.Sizes.MemNodes
	l := Line{Workload: "redis_bytes_per_node", N: n, Runs: e.Reps, Target: "≤ 300 B per completed node, outputs excluded (redis_bytes_per_node)",
		Method: "per repetition two finished n-node fan-outs + join: A of noop nodes without config (every output null), B of noop nodes each echoing its config " +
			fmt.Sprintf("%s as its output (%d bytes of JSON per node); ", outputConfigExample, len(outputConfigExample)) +
			"redis_bytes_per_node: A's engine state without outputs; redis_bytes_per_node_all: B's everything; redis_bytes_per_node_all_null: A's everything; " +
			redisBytesMethod + "; wall_ms: A created → finished"}
	s, err := e.startSession(ctx, l.Workload, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	wf, err := s.api.Register(ctx, fanOutDef("mem", n))
	if err != nil {
		return l, err
	}
	wfOut, err := s.api.Register(ctx, fanOutOutputsDef("memout", n))
	if err != nil {
		return l, err
	}
	var mem, allNull, allOut, wall []float64
	for rep := range e.Reps {
		r, err := s.runOnce(ctx, wf, bigRunTimeout)
		if err != nil {
			return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
		}
		bpn, all, err := s.runBytesPerNode(ctx, r.ID, wf, n)
		if err != nil {
			return l, err
		}
		ro, err := s.runOnce(ctx, wfOut, bigRunTimeout)
		if err != nil {
			return l, fmt.Errorf("%s rep %d with outputs: %w", l.Workload, rep+1, err)
		}
		_, withOut, err := s.runBytesPerNode(ctx, ro.ID, wfOut, n)
		if err != nil {
			return l, err
		}
		w, _ := r.WallMs()
		mem, allNull, allOut, wall = append(mem, bpn), append(allNull, all), append(allOut, withOut), append(wall, w)
		e.Log.Info(l.Workload, "rep", rep+1, "bytes_per_node", bpn, "all", withOut, "all_null", all)
	}
	l.set("redis_bytes_per_node", mem)
	l.set("wall_ms", wall)
	l.set("redis_bytes_per_node_all", allOut)
	l.set("redis_bytes_per_node_all_null", allNull)
	return l, nil
}
