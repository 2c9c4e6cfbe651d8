package workload

import (
	"context"
	"fmt"
	"time"
)

// bigRunTimeout bounds one large run.
const bigRunTimeout = 5 * time.Minute

// wallSpec is a workload measured by the wall time of one run.
type wallSpec struct {
	name, target string
	nodes        int
	def          []byte
	// depth is the number of nodes on the critical path (for the floor).
	depth int
	// goals are issue 20's targets for the line (none for most sizes).
	goals []goal
}

// FanOutJoin runs a root, nodes-2 parallel noops and a join, Reps times;
// target is kept next to goals (issue 20), when there are any.
func FanOutJoin(nodes int, target string, goals ...goal) Workload {
	return func(ctx context.Context, e *Env) (Line, error) {
		name := fmt.Sprintf("fanout_%d_join", nodes)
		return wallWorkload(ctx, e, wallSpec{name: name, target: target, nodes: nodes, def: fanOutDef("fanout", nodes), depth: 3, goals: goals})
	}
}

// Chain runs a chain of nodes noops, Reps times.
func Chain(nodes int, target string, goals ...goal) Workload {
	return func(ctx context.Context, e *Env) (Line, error) {
		name := fmt.Sprintf("chain_%d", nodes)
		return wallWorkload(ctx, e, wallSpec{name: name, target: target, nodes: nodes, def: chainDef("chain", nodes), depth: nodes, goals: goals})
	}
}

// wallWorkload runs spec.def Reps times in a fresh session.
func wallWorkload(ctx context.Context, e *Env, spec wallSpec) (Line, error) {
	l := Line{Workload: spec.name, N: spec.nodes, Runs: e.Reps, Target: spec.target,
		Method: "wall_ms: run created_at → finished_at as the api reports them (ms; API accept to run finished); tasks_per_s: nodes / wall; " +
			"client_wall_ms: bench clock from sending POST /workflows/{name}/runs?wait= to holding its answer (its last byte read), the succeeded run with every node's state " +
			"(what a client waiting for the run sees); client_decode_ms: the bench's decoding of that answer afterwards (encoding/json), not in client_wall_ms; " +
			"client_ms_per_node: client_wall_ms / nodes; " +
			"rss_mb: orchestrator VmHWM during the run (fresh processes per workload, peak reset before each repetition); " +
			redisBytesMethod + " (noop nodes without config: every output is null; the redis_bytes_per_node line has nodes with outputs); " +
			"floor_ratio: wall / floor, floor = 2 messages per node at the floor's batched hops/s + critical-path nodes × 2 floor hop p50; " +
			"cpu_us_per_node_*: CPU time (utime+stime, /proc) of each process group from the request to holding the waited answer, per node (µs; the bench's includes reading and decoding the answer)"}
	if len(spec.goals) > 0 {
		l.setGoals(spec.target, spec.goals...)
	}
	s, err := e.startSession(ctx, spec.name, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	wf, err := s.api.Register(ctx, spec.def)
	if err != nil {
		return l, err
	}
	var wall, client, decode, rss, mem, memAll []float64
	cpu := map[string][]float64{}
	for rep := range e.Reps {
		s.orchestratorPeak()
		shares := s.startCPUShares()
		r, cms, err := s.runWaited(ctx, wf, bigRunTimeout)
		if err != nil {
			return l, fmt.Errorf("%s rep %d: %w", spec.name, rep+1, err)
		}
		for name, us := range shares.perNode(spec.nodes) {
			cpu[name] = append(cpu[name], us)
		}
		w, err := r.WallMs()
		if err != nil {
			return l, err
		}
		bpn, all, err := s.runBytesPerNode(ctx, r.ID, wf, spec.nodes)
		if err != nil {
			return l, err
		}
		wall, client, decode = append(wall, w), append(client, cms.ms), append(decode, cms.decodeMs)
		rss, mem, memAll = append(rss, s.rssMB()), append(mem, bpn), append(memAll, all)
		e.Log.Info(spec.name, "rep", rep+1, "wall_ms", w, "client_wall_ms", cms.ms, "client_decode_ms", cms.decodeMs, "rss_mb", rss[rep], "redis_bytes_per_node", bpn)
	}
	l.set("wall_ms", wall)
	l.set("tasks_per_s", perSecond(float64(spec.nodes), wall))
	l.set("rss_mb", rss)
	l.set("redis_bytes_per_node", mem)
	floorMs := 2*float64(spec.nodes)/e.Floor.HopsPerS*1000 + float64(spec.depth)*2*e.Floor.HopP50Ms
	l.set("floor_ratio", ratios(wall, floorMs))
	l.set("floor_ms", repeat(floorMs, len(wall)))
	l.set("client_wall_ms", client)
	l.set("client_decode_ms", decode)
	l.set("client_ms_per_node", perNode(client, spec.nodes))
	l.set("redis_bytes_per_node_all", memAll)
	for _, name := range s.shareNames() {
		l.set("cpu_us_per_node_"+name, cpu[name])
	}
	return l, nil
}
