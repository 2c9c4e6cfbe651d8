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
		Target: "≥ 5,000 tasks/s sustained 60 s, run p99 reported",
		Method: fmt.Sprintf("n runs of a 10-node diamond (root, 8 parallel, join) kept in flight for %s (BENCH_SUSTAIN), a new run started over HTTP "+
			"whenever one ends (its state read from Redis, read-only, every %s); tasks_per_s: nodes of runs finished inside the window / window; "+
			"p50_ms/p99_ms: run created → finished (Redis run hash, ms) of those runs; wall_ms: the window; rss_mb: orchestrator VmHWM during the window; "+
			"floor_ratio: tasks_per_s / (floor hops/s / 2), a task being two messages (higher is better here); "+
			"cpu_pct_*: CPU time (utime+stime, /proc) of each process group over the window and its drain, in %% of one core (kfake runs inside the braid infra process)", d, statePoll)}
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
	var tput, p50, p99, wall, rss []float64
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
		lat, err := s.sustain(ctx, wf, c, d)
		for name, pct := range shares.percents() {
			cpu[name] = append(cpu[name], pct)
		}
		prof.Wait()
		if err != nil {
			return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
		}
		secs := d.Seconds()
		tput = append(tput, float64(len(lat)*diamondNodes)/secs)
		p50, p99 = append(p50, stats.Percentile(lat, 50)), append(p99, stats.Percentile(lat, 99))
		wall, rss = append(wall, float64(d.Milliseconds())), append(rss, s.rssMB())
		e.Log.Info(l.Workload, "rep", rep+1, "tasks_per_s", tput[rep], "p50_ms", p50[rep], "p99_ms", p99[rep], "rss_mb", rss[rep])
	}
	l.set("tasks_per_s", tput)
	l.set("p50_ms", p50)
	l.set("p99_ms", p99)
	l.set("wall_ms", wall)
	l.set("rss_mb", rss)
	l.set("floor_ratio", ratios(tput, e.Floor.HopsPerS/2))
	for _, name := range cpuShareNames {
		l.set("cpu_pct_"+name, cpu[name])
	}
	return l, nil
}

// sustain keeps n runs of wf in flight for d and returns the latencies (ms)
// of the runs that finished inside the window; runs still in flight when it
// closes are waited for (and must succeed) but not counted.
func (s *session) sustain(ctx context.Context, wf string, n int, d time.Duration) ([]float64, error) {
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
	lat, err := s.harvest(ctx, inflight, tokens, end, endMs)
	close(tokens)
	wg.Wait()
	select {
	case serr := <-startErr:
		return nil, serr
	default:
	}
	if err != nil {
		return nil, err
	}
	// A start in flight when the last run ended is waited for too.
	if late := inflight.list(); len(late) > 0 {
		if _, err := s.waitAll(ctx, late, drainTimeout); err != nil {
			return nil, err
		}
	}
	return lat, nil
}

// harvest polls the in-flight runs, hands a token back for each finished
// one while the window is open, and returns the latencies of runs that
// finished by endMs. After the window it waits until none is in flight.
func (s *session) harvest(ctx context.Context, inflight *idSet, tokens chan<- struct{}, end time.Time, endMs int64) ([]float64, error) {
	var lat []float64
	drainBy := end.Add(drainTimeout)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ids := inflight.list()
		if len(ids) == 0 && time.Now().After(end) {
			return lat, nil
		}
		if time.Now().After(drainBy) {
			return nil, fmt.Errorf("%d runs still in flight %s after the window", len(ids), drainTimeout)
		}
		states, err := s.runStates(ctx, ids)
		if err != nil {
			return nil, err
		}
		for _, r := range states {
			if !r.terminal() {
				continue
			}
			if r.status != "succeeded" {
				return nil, fmt.Errorf("run %s ended %s", r.id, r.status)
			}
			inflight.remove(r.id)
			if r.finished <= endMs {
				lat = append(lat, r.latencyMs())
			}
			if time.Now().Before(end) {
				tokens <- struct{}{} // never blocks: one token per run in flight
			}
		}
		if err := s.svc.Alive(); err != nil {
			return nil, err
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
