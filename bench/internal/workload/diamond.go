package workload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/braidhq/braid/bench/internal/stats"
)

// diamondNodes is the size of the sustained load's workflow.
const diamondNodes = 10

// Diamonds holds Diamonds runs of a 10-node diamond in flight for Sustain,
// starting a new run whenever one ends, Reps times.
func Diamonds(ctx context.Context, e *Env) (Line, error) {
	c, d := e.Sizes.Diamonds, e.Sizes.Sustain
	l := Line{Workload: fmt.Sprintf("diamond_%d_concurrent", c), N: c, Runs: e.Reps,
		Method: fmt.Sprintf("n runs of a 10-node diamond (root, 8 parallel, join) kept in flight for %s (BENCH_SUSTAIN), a new run started over HTTP "+
			"whenever one ends (learnt read-only from Redis every %s: the in-flight runs looked up in the active-runs index, ZMSCORE, and the state of those gone from it read from their run hash); %s; wall_ms: the window; rss_mb: orchestrator VmHWM during the window; "+
			"floor_ratio: tasks_per_s / (floor hops/s / 2), a task being two messages (higher is better here); "+
			"cpu_pct_*: CPU time (utime+stime, /proc) of each process group over the window and its drain, in %% of one core (kfake runs inside the braid infra process); %s",
			d, statePoll, sustainMethod, pooledMethod)}
	l.setGoals("sustained 60 s, run p99 reported (#6)", goal{figure: "tasks_per_s", limit: 20000})
	pprofAddr := ""
	if e.Profile == "diamond" {
		addr, err := freePprofAddr()
		if err != nil {
			return l, err
		}
		pprofAddr = addr
	}
	s, err := e.startSession(ctx, l.Workload, pprofAddr)
	if err != nil {
		return l, err
	}
	defer s.close()
	wf, err := s.api.Register(ctx, fanOutDef("diamond", diamondNodes))
	if err != nil {
		return l, err
	}
	var sets [][]float64
	var tput, late, wall, rss []float64
	cpu := map[string][]float64{}
	for rep := range e.Reps {
		s.orchestratorPeak()
		var prof sync.WaitGroup
		if pprofAddr != "" && rep == e.Reps-1 {
			prof.Add(1)
			go func() {
				defer prof.Done()
				secs := max(int(d/time.Second)-1, 1)
				if err := cpuProfile(ctx, pprofAddr, e.ProfilePath, secs); err != nil {
					e.Log.Warn("cpu profile", "err", err)
				} else {
					e.Log.Info("cpu profile written", "path", e.ProfilePath, "seconds", secs)
				}
			}()
		}
		shares := s.startCPUShares()
		res, err := s.sustain(ctx, wf, c, d)
		for name, pct := range shares.percents() {
			cpu[name] = append(cpu[name], pct)
		}
		prof.Wait()
		if err != nil {
			return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
		}
		lat := res.all()
		tput, sets, late = append(tput, res.tasksPerS(diamondNodes, d)), append(sets, lat), append(late, float64(len(res.late)))
		wall, rss = append(wall, float64(d.Milliseconds())), append(rss, s.rssMB())
		e.Log.Info(l.Workload, "rep", rep+1, "tasks_per_s", tput[rep], "p50_ms", stats.Percentile(lat, 50), "p99_ms", stats.Percentile(lat, 99),
			"in_flight_at_end", len(res.late), "rss_mb", rss[rep])
	}
	l.set("tasks_per_s", tput)
	l.setPooled("", sets)
	l.set("wall_ms", wall)
	l.set("rss_mb", rss)
	l.set("floor_ratio", ratios(tput, e.Floor.HopsPerS/2))
	l.set("in_flight_at_end", late)
	for _, name := range s.shareNames() {
		l.set("cpu_pct_"+name, cpu[name])
	}
	return l, nil
}

// sustained is what a sustained load yields: the latencies (ms, created →
// finished) of the runs that finished inside the window, and of the runs
// created inside it that were still in flight when it closed.
type sustained struct {
	done, late []float64
}

// all is every latency: the finished runs' and the late ones'.
func (r sustained) all() []float64 { return append(append([]float64{}, r.done...), r.late...) }

// tasksPerS is nodes of runs finished inside the window per second of d.
func (r sustained) tasksPerS(nodes int, d time.Duration) float64 {
	return float64(len(r.done)*nodes) / d.Seconds()
}

// sustainMethod says how sustained's figures read, for the lines' methods.
const sustainMethod = "tasks_per_s: nodes of runs finished inside the window / window; run latency (p50_ms/p99_ms): created → finished (Redis run hash, ms) " +
	"of every run created inside the window — the runs finished inside it and those still in flight when it closed, which are waited for " +
	"(no new runs start then) and counted with their real end: a censored value (window end − created) would understate them, and the real end is " +
	"never below it; in_flight_at_end: how many such runs were in flight when the window closed"

// sustain keeps n runs of wf in flight for d and returns the latencies of
// the runs created inside the window (see sustained); runs still in flight
// when it closes are waited for and must succeed.
func (s *session) sustain(ctx context.Context, wf string, n int, d time.Duration) (sustained, error) {
	t0 := time.Now()
	end := t0.Add(d)
	endMs := end.UnixMilli()
	tokens := make(chan struct{}, n)
	for range n {
		tokens <- struct{}{}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	inflight := &idSet{m: map[string]struct{}{}}
	startErr := make(chan error, starters)
	var wg sync.WaitGroup
	for range starters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range tokens {
				if time.Now().After(end) {
					continue
				}
				id, err := s.api.Start(ctx, wf)
				if err != nil {
					startErr <- err
					cancel()
					return
				}
				inflight.add(id)
			}
		}()
	}
	res, err := s.harvest(ctx, inflight, tokens, end, endMs)
	close(tokens)
	wg.Wait()
	select {
	case serr := <-startErr:
		return sustained{}, serr
	default:
	}
	if err != nil {
		return sustained{}, err
	}
	// A start in flight when the last run ended is waited for too.
	if left := inflight.list(); len(left) > 0 {
		states, err := s.waitAll(ctx, left, drainTimeout)
		if err != nil {
			return sustained{}, err
		}
		for _, r := range states {
			res.add(r, endMs)
		}
	}
	return res, nil
}

// add files ended run r: done when it finished by endMs, late when it
// was created by endMs and finished after; a run created after the window
// (its POST was answered late) is not counted.
func (r *sustained) add(run runState, endMs int64) {
	switch {
	case run.finished <= endMs:
		r.done = append(r.done, run.latencyMs())
	case run.created <= endMs:
		r.late = append(r.late, run.latencyMs())
	}
}

// harvest polls the in-flight runs, hands a token back for each finished
// one while the window is open, and files every ended run (sustained.add).
// After the window it waits until none is in flight.
func (s *session) harvest(ctx context.Context, inflight *idSet, tokens chan<- struct{}, end time.Time, endMs int64) (sustained, error) {
	var res sustained
	if err := s.readLayout(ctx); err != nil {
		return res, err
	}
	drainBy := end.Add(drainTimeout)
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		ids := inflight.list()
		if len(ids) == 0 && time.Now().After(end) {
			return res, nil
		}
		if time.Now().After(drainBy) {
			return res, fmt.Errorf("%d runs still in flight %s after the window", len(ids), drainTimeout)
		}
		states, err := s.endedStates(ctx, ids)
		if err != nil {
			return res, err
		}
		for _, r := range states {
			if !r.terminal() {
				continue
			}
			if r.status != "succeeded" {
				return res, fmt.Errorf("run %s ended %s", r.id, r.status)
			}
			inflight.remove(r.id)
			res.add(r, endMs)
			if time.Now().Before(end) {
				tokens <- struct{}{} // never blocks: one token per run in flight
			}
		}
		if err := s.alive(); err != nil {
			return res, err
		}
		time.Sleep(statePoll)
	}
}

// idSet is a set of run ids, safe for concurrent use.
type idSet struct {
	mu sync.Mutex
	m  map[string]struct{}
}

func (s *idSet) add(id string) {
	s.mu.Lock()
	s.m[id] = struct{}{}
	s.mu.Unlock()
}

func (s *idSet) remove(id string) {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
}

func (s *idSet) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.m))
	for id := range s.m {
		out = append(out, id)
	}
	return out
}
