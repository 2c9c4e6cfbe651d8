package workload

import (
	"context"
	"fmt"
	"math"
)

// InFlight starts InFlightRuns runs of a BigFanOut-node fan-out at once,
// so that InFlightRuns × BigFanOut node instances are pending, queued or
// running together, and reports the orchestrator's peak memory.
func InFlight(ctx context.Context, e *Env) (Line, error) {
	k, n := e.Sizes.InFlightRuns, e.Sizes.BigFanOut
	l := Line{Workload: "orchestrator_rss_inflight", N: k * n, Runs: e.Reps, Target: "≤ 300 MB with 100,000 instances in flight",
		Method: fmt.Sprintf("%d runs of a %d-node fan-out + join started at once (n instances in all, dispatched as fast as the orchestrator goes); "+
			"rss_mb: orchestrator VmHWM (peak reset before each repetition); rss_mb_api, rss_mb_worker: the same for the api and the largest worker; "+
			"wall_ms: first created → last finished (Redis, ms); tasks_per_s: n / wall", k, n)}
	s, err := e.startSession(ctx, l.Workload, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	wf, err := s.api.Register(ctx, fanOutDef("inflight", n))
	if err != nil {
		return l, err
	}
	var rss, apiRSS, workerRSS, wall []float64
	for rep := range e.Reps {
		s.resetAllPeaks()
		ids, err := s.startMany(ctx, wf, k)
		if err != nil {
			return l, err
		}
		states, err := s.waitAll(ctx, ids, bigRunTimeout)
		if err != nil {
			return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
		}
		a, w := s.peaks()
		rss, apiRSS, workerRSS, wall = append(rss, s.rssMB()), append(apiRSS, a), append(workerRSS, w), append(wall, span(states))
		e.Log.Info(l.Workload, "rep", rep+1, "rss_mb", rss[rep], "wall_ms", wall[rep])
	}
	l.set("rss_mb", rss)
	l.set("wall_ms", wall)
	l.set("tasks_per_s", perSecond(float64(k*n), wall))
	l.set("rss_mb_api", apiRSS)
	l.set("rss_mb_worker", workerRSS)
	return l, nil
}

// resetAllPeaks resets VmHWM of every service process.
func (s *session) resetAllPeaks() {
	s.orchestratorPeak()
	for _, p := range append(s.svc.Workers, s.svc.API) {
		if err := p.ResetPeak(); err != nil {
			s.env.Log.Warn("reset peak", "err", err)
		}
	}
}

// peaks returns VmHWM (MiB) of the api and of the largest worker.
func (s *session) peaks() (apiMB, workerMB float64) {
	apiMB = nanF()
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
