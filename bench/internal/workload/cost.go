package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/braidhq/braid/pkg/testkit/procstack"
)

// costPoll is how often the cost lines read the small runs' states from
// Redis: seldom, as the reads cost Redis CPU inside the measurement.
const costPoll = 250 * time.Millisecond

// costSmallNodes is the size of the small DAG of the cost comparison.
const costSmallNodes = 10

// CompletionCost compares the orchestrator's CPU time per completed node in
// one large fan-out + join with the same number of completions spread over
// 10-node fan-outs started at once.
func CompletionCost(ctx context.Context, e *Env) (Line, error) {
	n := e.Sizes.CostNodes
	small := max(n/costSmallNodes, 1)
	l := Line{Workload: "completion_cost_large_vs_small", N: n, Runs: e.Reps,
		Target: "≤ 1.5× at 100,000 nodes vs 10 nodes (measured here at the definition limit, 10,000)",
		Method: fmt.Sprintf("cost_ratio: orchestrator CPU (utime+stime from /proc, 10 ms ticks) per completed node in one %d-node fan-out + join, "+
			"divided by the same in %d runs of a %d-node fan-out + join started at once (as many completions, both fully parallel); "+
			"cpu_us_per_node_large/_small: those costs; %s; wall_ms: the large run, created → finished", n, small, costSmallNodes, redisCostMethod)}
	return e.compareCost(ctx, l, costPair{large: fanOutDef("large", n), largeN: n, largeTimeout: bigRunTimeout,
		small: fanOutDef("small", costSmallNodes), smallRuns: small})
}

// costPair is what compareCost compares: one run of large (largeN
// completions) against smallRuns runs of small (costSmallNodes each).
type costPair struct {
	large        []byte
	largeN       int
	largeTimeout time.Duration
	small        []byte
	smallRuns    int
}

// compareCost measures, per repetition, the orchestrator's CPU per
// completion in one run of p.large and in p.smallRuns runs of p.small
// started at once, and fills l with wall_ms (the large run, created →
// finished), cost_ratio and both costs.
func (e *Env) compareCost(ctx context.Context, l Line, p costPair) (Line, error) {
	s, err := e.startSession(ctx, l.Workload, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	big, err := s.api.Register(ctx, p.large)
	if err != nil {
		return l, err
	}
	little, err := s.api.Register(ctx, p.small)
	if err != nil {
		return l, err
	}
	var large, smallCost, ratio, wall, redisLarge, redisSmall, ratioAll []float64
	for rep := range e.Reps {
		var w float64
		lc, lr, err := s.cpuPerNode(p.largeN, func() error {
			// One ?wait= request, not a GET of the large run every few
			// ms: that would load Redis (and the api) while its CPU counts.
			r, _, err := s.runWaited(ctx, big, p.largeTimeout)
			w, _ = r.WallMs()
			return err
		})
		if err != nil {
			return l, fmt.Errorf("%s rep %d large: %w", l.Workload, rep+1, err)
		}
		sc, sr, err := s.cpuPerNode(p.smallRuns*costSmallNodes, func() error {
			ids, err := s.startMany(ctx, little, p.smallRuns)
			if err == nil {
				_, err = s.waitAllEvery(ctx, ids, bigRunTimeout, costPoll)
			}
			return err
		})
		if err != nil {
			return l, fmt.Errorf("%s rep %d small: %w", l.Workload, rep+1, err)
		}
		large, smallCost, ratio, wall = append(large, lc), append(smallCost, sc), append(ratio, lc/sc), append(wall, w)
		redisLarge, redisSmall, ratioAll = append(redisLarge, lr), append(redisSmall, sr), append(ratioAll, (lc+lr)/(sc+sr))
		e.Log.Info(l.Workload, "rep", rep+1, "cpu_us_large", lc, "cpu_us_small", sc, "redis_cpu_us_large", lr, "redis_cpu_us_small", sr, "wall_ms", w)
	}
	l.set("wall_ms", wall)
	l.set("cost_ratio", ratio)
	l.set("cpu_us_per_node_large", large)
	l.set("cpu_us_per_node_small", smallCost)
	l.set("redis_cpu_us_per_node_large", redisLarge)
	l.set("redis_cpu_us_per_node_small", redisSmall)
	l.set("cost_ratio_with_redis", ratioAll)
	return l, nil
}

// redisCostMethod says how the cost lines' Redis figures read.
const redisCostMethod = "redis_cpu_us_per_node_large/_small: the same for redis-server (utime+stime from /proc of every redis-server process " +
	"of the setup; nothing but the workload's services uses it meanwhile, but for the bench reading the small runs' states every 250 ms — the large run is awaited " +
	"with one POST ?wait= — so the small figure holds that little extra); " +
	"cost_ratio_with_redis: (orchestrator + Redis CPU per completion, large) / (the same, small)"

// cpuPerNode runs work and returns the CPU microseconds it took per node
// of the orchestrator (of braid dev on the dev setup) and of redis-server.
func (s *session) cpuPerNode(nodes int, work func() error) (orch, rds float64, err error) {
	pids := s.redisPIDs()
	before, err := s.main.CPU()
	if err != nil {
		return 0, 0, err
	}
	rBefore, err := pidsCPU(pids)
	if err != nil {
		return 0, 0, err
	}
	if err := work(); err != nil {
		return 0, 0, err
	}
	after, err := s.main.CPU()
	if err != nil {
		return 0, 0, err
	}
	rAfter, err := pidsCPU(pids)
	if err != nil {
		return 0, 0, err
	}
	per := func(d time.Duration) float64 { return float64(d/time.Microsecond) / float64(nodes) }
	return per(after - before), per(rAfter - rBefore), nil
}

// pidsCPU sums the CPU time of pids; none is an error.
func pidsCPU(pids []int) (time.Duration, error) {
	if len(pids) == 0 {
		return 0, fmt.Errorf("no redis-server process found")
	}
	var sum time.Duration
	for _, pid := range pids {
		d, err := procstack.PIDCPU(pid)
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}
