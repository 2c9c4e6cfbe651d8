package workload

import (
	"context"
	"fmt"
)

// RedisPerNode runs a MemNodes-node fan-out + join Reps times and counts
// the Redis memory its finished run keeps per node, outputs excluded.
func RedisPerNode(ctx context.Context, e *Env) (Line, error) {
	n := e.Sizes.MemNodes
	l := Line{Workload: "redis_bytes_per_node", N: n, Runs: e.Reps, Target: "≤ 300 B per completed node, outputs excluded",
		Method: "a finished n-node noop fan-out + join (empty configs); redis_bytes_per_node: sum of MEMORY USAGE key SAMPLES 0 over every key " +
			"matching the run's {run id} hash tag except its outputs hash, / n; wall_ms: created → finished"}
	s, err := e.startSession(ctx, l.Workload, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	wf, err := s.api.Register(ctx, fanOutDef("mem", n))
	if err != nil {
		return l, err
	}
	var mem, wall []float64
	for rep := range e.Reps {
		r, err := s.runOnce(ctx, wf, bigRunTimeout)
		if err != nil {
			return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
		}
		bpn, err := s.runBytesPerNode(ctx, r.ID, n)
		if err != nil {
			return l, err
		}
		w, _ := r.WallMs()
		mem, wall = append(mem, bpn), append(wall, w)
		e.Log.Info(l.Workload, "rep", rep+1, "bytes_per_node", bpn)
	}
	l.set("redis_bytes_per_node", mem)
	l.set("wall_ms", wall)
	return l, nil
}
