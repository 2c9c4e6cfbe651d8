package workload

import (
	"context"
	"fmt"

	"github.com/braidhq/braid/bench/internal/stack"
)

// scaleTask is how long each task of the scaling load sleeps (simulate):
// long enough that the workers' slots, not the orchestrator, bound the
// throughput, so that adding workers shows.
const scaleTask = "20ms"

// scaleConcurrency is each worker's BRAID_WORKER_CONCURRENCY in the scaling
// load: 8 slots of 20-ms tasks make at most 400 tasks/s per worker.
const scaleConcurrency = 8

// scaleInFlight is how many diamond runs the scaling load keeps in flight:
// enough to fill four workers' slots (each run offers up to 8 tasks at
// once), few enough that runs finish within the window even with one
// worker (the figure counts the nodes of finished runs).
const scaleInFlight = 64

// ScaleWorkers holds the diamond load (scaleInFlight runs in flight, 20-ms
// simulate tasks) for half of Sustain on stacks of 1, 2 and 4 worker
// processes, Reps times each: tasks/s per worker count.
func ScaleWorkers(ctx context.Context, e *Env) (Line, error) {
	c, d := min(scaleInFlight, e.Sizes.Diamonds), e.Sizes.Sustain/2
	l := Line{Workload: "scale_workers", N: c, Runs: e.Reps, Target: "tasks/s grows with workers until the broker or Redis is the limit",
		Method: fmt.Sprintf("n runs of a 10-node diamond of %s simulate tasks kept in flight for %s on a fresh stack of 1, 2 and 4 worker processes "+
			"(BRAID_WORKER_CONCURRENCY=%d, at most %d tasks/s each); tasks_per_s_N: nodes of runs finished inside the window / window with N workers",
			scaleTask, d, scaleConcurrency, scaleConcurrency*1000/20)}
	for _, n := range []int{1, 2, 4} {
		s, err := e.startSessionWith(ctx, fmt.Sprintf("%s_%d", l.Workload, n), stack.Options{Workers: n, WorkerConcurrency: scaleConcurrency})
		if err != nil {
			return l, err
		}
		wf, err := s.api.Register(ctx, sleepyFanOutDef("scale", diamondNodes, scaleTask))
		if err != nil {
			s.close()
			return l, err
		}
		var tput []float64
		for rep := range e.Reps {
			res, err := s.sustain(ctx, wf, c, d)
			if err != nil {
				s.close()
				return l, fmt.Errorf("%s %d workers rep %d: %w", l.Workload, n, rep+1, err)
			}
			tput = append(tput, res.tasksPerS(diamondNodes, d))
			e.Log.Info(l.Workload, "workers", n, "rep", rep+1, "tasks_per_s", tput[rep])
		}
		s.close()
		l.set(fmt.Sprintf("tasks_per_s_%d", n), tput)
	}
	return l, nil
}

// sleepyFanOutDef is fanOutDef with every node a simulate task of d.
func sleepyFanOutDef(name string, n int, d string) []byte {
	mids := make([]string, 0, n-2)
	nodes := []node{{ID: "root", Handler: "simulate", Config: map[string]any{"duration": d}}}
	for i := range n - 2 {
		id := nodeID(i)
		mids = append(mids, id)
		nodes = append(nodes, node{ID: id, Handler: "simulate", DependsOn: []string{"root"}, Config: map[string]any{"duration": d}})
	}
	nodes = append(nodes, node{ID: "join", Handler: "simulate", DependsOn: mids, Config: map[string]any{"duration": d}})
	return definition(name, nodes)
}
