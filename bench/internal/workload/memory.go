package workload

import (
	"context"
	"fmt"
	"time"
)

// RedisPerNode runs a MemNodes-node fan-out + join Reps times and counts
// the Redis memory its finished run keeps per node, outputs excluded.
func RedisPerNode(ctx context.Context, e *Env) (Line, error) {
	n := e.Sizes.MemNodes
	l := Line{Workload: "redis_bytes_per_node", N: n, Runs: e.Reps, Target: "≤ 300 B per completed node, outputs excluded",
		Method: "a finished n-node noop fan-out + join (empty configs); redis_bytes_per_node: sum of MEMORY USAGE key SAMPLES 0 over every key " +
			"matching the run's {run id} hash tag except its outputs hash, / n; used_memory_delta_per_node: INFO used_memory after − before the run, / n " +
			"(includes outputs, Kafka-free, but any other writer to this Redis too); wall_ms: created → finished"}
	s, err := e.startSession(ctx, l.Workload, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	wf, err := s.api.Register(ctx, fanOutDef("mem", n))
	if err != nil {
		return l, err
	}
	var mem, delta, wall []float64
	for rep := range e.Reps {
		before, err := s.usedMemory(ctx)
		if err != nil {
			return l, err
		}
		r, err := s.runOnce(ctx, wf, bigRunTimeout)
		if err != nil {
			return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
		}
		after, err := s.usedMemory(ctx)
		if err != nil {
			return l, err
		}
		bpn, err := s.runBytesPerNode(ctx, r.ID, n)
		if err != nil {
			return l, err
		}
		w, _ := r.WallMs()
		mem, delta, wall = append(mem, bpn), append(delta, float64(after-before)/float64(n)), append(wall, w)
		e.Log.Info(l.Workload, "rep", rep+1, "bytes_per_node", bpn)
	}
	l.set("redis_bytes_per_node", mem)
	l.set("wall_ms", wall)
	l.set("used_memory_delta_per_node", delta)
	return l, nil
}

// usedMemory reads used_memory from INFO memory.
func (s *session) usedMemory(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := s.env.Redis.InfoMap(ctx, "memory").Result()
	if err != nil {
		return 0, fmt.Errorf("info memory: %w", err)
	}
	var n int64
	if _, err := fmt.Sscan(info["Memory"]["used_memory"], &n); err != nil {
		return 0, fmt.Errorf("info memory: used_memory %q: %w", info["Memory"]["used_memory"], err)
	}
	return n, nil
}
