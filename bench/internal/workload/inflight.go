package workload

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/braidhq/braid/pkg/testkit/procstack"
	"github.com/redis/go-redis/v9"
)

// InFlight starts InFlightRuns runs of a BigFanOut-node fan-out at once,
// so that InFlightRuns × BigFanOut node instances are pending, queued or
// running together, and reports the orchestrator's peak memory with how
// many instances were outstanding when that peak was read.
func InFlight(ctx context.Context, e *Env) (Line, error) {
	k, n := e.Sizes.InFlightRuns, e.Sizes.BigFanOut
	l := Line{Workload: "orchestrator_rss_inflight", N: k * n, Runs: e.Reps, Target: "≤ 300 MB with 100,000 instances in flight",
		Method: fmt.Sprintf("%d runs of a %d-node fan-out + join started at once (n instances in all, dispatched as fast as the orchestrator goes); "+
			"rss_mb: orchestrator VmHWM (peak reset before each repetition), read every %s while the runs go and once after they ended; "+
			"outstanding_instances: node instances of those runs not in a terminal state, counted from Redis right after the VmHWM read that first showed "+
			"the repetition's peak (a read-only Lua script over each run's nodes hash, run whenever VmHWM rose; a node without a record yet counts as outstanding); "+
			"outstanding_instances_highest: the most counted at any such read; rss_mb_api, rss_mb_worker: VmHWM of the api and the largest worker; "+
			"wall_ms: first created → last finished (Redis, ms); tasks_per_s: n / wall", k, n, inflightSample)}
	s, err := e.startSession(ctx, l.Workload, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	wf, err := s.api.Register(ctx, fanOutDef("inflight", n))
	if err != nil {
		return l, err
	}
	var rss, apiRSS, workerRSS, wall, outAtPeak, outMax []float64
	for rep := range e.Reps {
		s.resetAllPeaks()
		ids, err := s.startMany(ctx, wf, k)
		if err != nil {
			return l, err
		}
		w, err := s.watchInFlight(ctx, ids, n)
		if err != nil {
			return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
		}
		a, wk := s.peaks()
		rss, apiRSS, workerRSS, wall = append(rss, w.hwm), append(apiRSS, a), append(workerRSS, wk), append(wall, span(w.states))
		outAtPeak, outMax = append(outAtPeak, float64(w.atPeak)), append(outMax, float64(w.most))
		e.Log.Info(l.Workload, "rep", rep+1, "rss_mb", w.hwm, "outstanding_instances", w.atPeak, "wall_ms", wall[rep])
	}
	l.set("rss_mb", rss)
	l.set("wall_ms", wall)
	l.set("tasks_per_s", perSecond(float64(k*n), wall))
	l.set("outstanding_instances", outAtPeak)
	l.set("outstanding_instances_highest", outMax)
	l.set("rss_mb_api", apiRSS)
	l.set("rss_mb_worker", workerRSS)
	if med := l.Figures["outstanding_instances"].Median; med < float64(k*n) {
		l.Method += fmt.Sprintf("; NOTE: fewer instances than intended were outstanding when the peak was read: %.0f of %d (%.1f %%, median of the repetitions)",
			med, k*n, 100*med/float64(k*n))
	}
	return l, nil
}

// inflightSample is how often InFlight reads the orchestrator's VmHWM.
const inflightSample = 250 * time.Millisecond

// countTerminal returns how many node records of the nodes hash KEYS[1]
// are in a terminal state (succeeded, failed, skipped, cancelled). It only
// reads: HVALS and a pattern match of each record's "s" field, O(nodes).
var countTerminal = redis.NewScript(`
local done = 0
local vals = redis.call('HVALS', KEYS[1])
for i = 1, #vals do
  local st = string.match(vals[i], '"s":"(%a+)"')
  if st == 'succeeded' or st == 'failed' or st == 'skipped' or st == 'cancelled' then done = done + 1 end
end
return done`)

// inFlightWatch is what watchInFlight saw.
type inFlightWatch struct {
	hwm          float64 // the orchestrator's peak, MiB
	atPeak, most int     // outstanding at the read that showed hwm; the most at any read
	states       []runState
}

// watchInFlight reads the orchestrator's VmHWM every inflightSample until
// every run of ids (nodes instances each) ended, counting the outstanding
// instances whenever the peak rose, and requires they all succeeded.
func (s *session) watchInFlight(ctx context.Context, ids []string, nodes int) (inFlightWatch, error) {
	var w inFlightWatch
	sample := func() error {
		m, err := s.main.ReadMem()
		if err != nil || m.HWM <= w.hwm {
			return err
		}
		out, err := s.outstanding(ctx, ids, nodes)
		if err != nil {
			return err
		}
		w.hwm, w.atPeak, w.most = m.HWM, out, max(w.most, out)
		return nil
	}
	err := procstack.Poll(bigRunTimeout, inflightSample, func() (bool, error) {
		if err := sample(); err != nil {
			return false, err
		}
		states, err := s.runStates(ctx, ids)
		if err != nil {
			return false, err
		}
		w.states = states
		for _, r := range states {
			if !r.terminal() {
				return false, s.alive()
			}
		}
		return true, nil
	})
	if err == nil {
		err = sample() // a peak after the last read while the runs went
	}
	if err != nil {
		return w, fmt.Errorf("wait for %d runs: %w", len(ids), err)
	}
	return w, requireSucceeded(w.states)
}

// outstanding counts the instances of runs ids (nodes each) that are not
// in a terminal state.
func (s *session) outstanding(ctx context.Context, ids []string, nodes int) (int, error) {
	total := 0
	for _, id := range ids {
		done, err := countTerminal.Run(ctx, s.rdb, []string{s.keys.Nodes(id)}).Int()
		if err != nil {
			return 0, fmt.Errorf("count finished nodes of run %s: %w", id, err)
		}
		total += nodes - done
	}
	return total, nil
}

// resetAllPeaks resets VmHWM of every service process.
func (s *session) resetAllPeaks() {
	s.orchestratorPeak()
	if s.svc == nil {
		return // braid dev: one process
	}
	for _, p := range append(s.svc.Workers, s.svc.API) {
		if err := p.ResetPeak(); err != nil {
			s.env.Log.Warn("reset peak", "err", err)
		}
	}
}

// peaks returns VmHWM (MiB) of the api and of the largest worker (NaN on
// braid dev, where they share one process).
func (s *session) peaks() (apiMB, workerMB float64) {
	apiMB = nanF()
	if s.svc == nil {
		return apiMB, nanF()
	}
	if m, err := s.svc.API.ReadMem(); err == nil {
		apiMB = m.HWM
	}
	workerMB = nanF()
	for _, p := range s.svc.Workers {
		if m, err := p.ReadMem(); err == nil && (math.IsNaN(workerMB) || m.HWM > workerMB) {
			workerMB = m.HWM
		}
	}
	return apiMB, workerMB
}
