package orchsvc

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/braidhq/braid/pkg/metrics"
	"github.com/braidhq/braid/pkg/metrics/catalog"
	"github.com/braidhq/braid/pkg/opsserve"
	"github.com/braidhq/braid/pkg/records"
	"github.com/prometheus/client_golang/prometheus"
)

// The duties whose leases braid_orchestrator_leader reports.
const (
	dutyMaintenance = "maintenance"
	dutyScheduler   = "scheduler"
)

// orchMetrics are the orchestrator's own collectors (the Redis and bus
// ones are pkg/metrics'). Each method is cheap: a counter add or a gauge
// set, on label children resolved at start-up where the values are known.
// A nil *orchMetrics counts nothing (tests that build a Service by hand).
type orchMetrics struct {
	started, ended *prometheus.CounterVec // by workflow (and outcome)
	takeovers      prometheus.Counter
	leader         map[string]prometheus.Gauge // by duty
	fires          prometheus.Counter
	overlap, late  prometheus.Counter
	dropped        prometheus.Counter
	workers        *prometheus.GaugeVec          // no labels: Reset drops it when not the leader
	indexed        *prometheus.GaugeVec          // runs by set (runSets): Reset drops it when not the leader
	reconciles     map[string]prometheus.Counter // by pass: busy, active
	// svc is the service whose counters (StaleWrites, ...) are read at
	// scrape time; nil until New has built it.
	svc atomic.Pointer[Service]
}

// newOrchMetrics registers the orchestrator's collectors on r.
func newOrchMetrics(r prometheus.Registerer) (*orchMetrics, error) {
	m := &orchMetrics{leader: map[string]prometheus.Gauge{}, reconciles: map[string]prometheus.Counter{}}
	var errs []error
	collect := func(err error) { errs = append(errs, err) }
	var err error
	m.started, err = metrics.NewCounterVec(r, catalog.RunsStarted)
	collect(err)
	m.ended, err = metrics.NewCounterVec(r, catalog.RunsEnded)
	collect(err)
	m.takeovers, err = metrics.NewCounter(r, catalog.LockTakeovers)
	collect(err)
	m.fires, err = metrics.NewCounter(r, catalog.SchedulerFires)
	collect(err)
	misses, err := metrics.NewCounterVec(r, catalog.SchedulerMisses)
	collect(err)
	leader, err := metrics.NewGaugeVec(r, catalog.Leader)
	collect(err)
	m.workers, err = metrics.NewGaugeVec(r, catalog.LiveWorkers)
	collect(err)
	m.indexed, err = metrics.NewGaugeVec(r, catalog.IndexedRuns)
	collect(err)
	reconciles, err := metrics.NewCounterVec(r, catalog.Reconciles)
	collect(err)
	for f, n := range map[*catalog.Family]func(*Service) int64{
		&catalog.StaleWrites:  func(s *Service) int64 { return s.StaleWrites.Load() },
		&catalog.WorkersLost:  func(s *Service) int64 { return s.WorkersLost.Load() },
		&catalog.AttemptsLost: func(s *Service) int64 { return s.LostAttempts.Load() },
		&catalog.RunsPruned:   func(s *Service) int64 { return s.RunsPruned.Load() },
	} {
		_, err = metrics.NewCounterFunc(r, *f, func() float64 {
			if s := m.svc.Load(); s != nil {
				return float64(n(s))
			}
			return 0
		})
		collect(err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("orchestrator metrics: %w", err)
	}
	m.overlap, m.late, m.dropped = misses.WithLabelValues("overlap"), misses.WithLabelValues("late"), misses.WithLabelValues("dropped")
	for _, d := range []string{dutyMaintenance, dutyScheduler} {
		m.leader[d] = leader.WithLabelValues(d)
	}
	for _, p := range []string{passBusy, passActive} {
		m.reconciles[p] = reconciles.WithLabelValues(p)
	}
	return m, nil
}

// runs counts the runs of a stored batch round that began running or
// ended.
func (m *orchMetrics) runs(applied []*runBatch) {
	if m == nil {
		return
	}
	for _, g := range applied {
		r := g.o.run
		if r == nil || !g.eff.RunStatusChanged() {
			continue
		}
		if g.eff.Started {
			m.started.WithLabelValues(r.Workflow).Inc()
		}
		if r.Status.Terminal() {
			m.ended.WithLabelValues(r.Workflow, outcome(r.Status)).Inc()
		}
	}
}

// outcome is the outcome label of a terminal run status.
func outcome(s records.RunStatus) string { return string(s) }

// takeover counts a lock taken over (a takeover repair follows).
func (m *orchMetrics) takeover(yes bool) {
	if yes && m != nil {
		m.takeovers.Inc()
	}
}

// reconciled counts n RECONCILE controls a pass (passBusy, passActive)
// published.
func (m *orchMetrics) reconciled(pass string, n int) {
	if m == nil {
		return
	}
	if c := m.reconciles[pass]; c != nil {
		c.Add(float64(n))
	}
}

// leading records whether this orchestrator holds duty's lease and returns
// held. Once the maintenance lease is lost the live-worker count, which
// only its holder keeps, is dropped.
func (m *orchMetrics) leading(duty string, held bool) bool {
	if m == nil {
		return held
	}
	if held {
		m.leader[duty].Set(1)
		return true
	}
	m.leader[duty].Set(0)
	if duty == dutyMaintenance {
		m.workers.Reset()
		m.indexed.Reset()
	}
	return false
}

// liveWorkers records how many registered workers the maintenance leader
// found alive.
func (m *orchMetrics) liveWorkers(n int) {
	if m != nil {
		m.workers.WithLabelValues().Set(float64(n))
	}
}

// indexedRuns records how many runs each run index holds.
func (m *orchMetrics) indexedRuns(counts map[string]int64) {
	if m == nil {
		return
	}
	for set, n := range counts {
		m.indexed.WithLabelValues(set).Set(float64(n))
	}
}

// liveWorkersIf records n live workers when known is true.
func (m *orchMetrics) liveWorkersIf(known bool, n int) {
	if known {
		m.liveWorkers(n)
	}
}

// decided counts what a due schedule's decision missed: a skipped fire
// (overlap), earlier fire times dropped because they were late (counted
// once per catch-up, however many were dropped).
func (m *orchMetrics) decided(next, fireAt time.Time, due, fire bool) {
	if m == nil || !due {
		return
	}
	if !fire {
		m.overlap.Inc()
	}
	if fireAt.After(next) {
		m.late.Inc()
	}
}

// fired counts a schedule fire whose run was requested.
func (m *orchMetrics) fired() {
	if m != nil {
		m.fires.Inc()
	}
}

// droppedFire counts a fire dropped because its workflow is gone.
func (m *orchMetrics) droppedFire() {
	if m != nil {
		m.dropped.Inc()
	}
}

// serveOps serves /metrics, /healthz and /readyz (Redis answers, the
// service is not stopping) on addr until the caller stops the server; an
// empty addr serves nothing (a nil server, whose Stop does nothing).
func (s *Service) serveOps(ctx context.Context, addr string) (*opsserve.Server, error) {
	srv, err := opsserve.Start(opsserve.Config{Addr: addr, Service: "orchestrator", Metrics: s.cfg.Metrics.Gatherer, Ready: map[string]opsserve.Check{
		"redis":        func(c context.Context) error { return s.rdb.Ping(c).Err() },
		"orchestrator": func(context.Context) error { return ctx.Err() },
	}}, s.log)
	if err != nil {
		return nil, fmt.Errorf("orchestrator: %w", err)
	}
	return srv, nil
}

// instrument registers the orchestrator's collectors, the Redis hook and
// the bus observer on cfg.Metrics; it returns cfg with the observer set.
func instrument(cfg Config) (Config, *orchMetrics, error) {
	m, err := newOrchMetrics(cfg.Metrics.Registerer)
	if err != nil {
		return cfg, nil, err
	}
	if err := metrics.InstrumentRedis(cfg.Redis, cfg.Metrics.Registerer); err != nil {
		return cfg, nil, fmt.Errorf("orchestrator metrics: %w", err)
	}
	cfg.Bus.Observer, err = metrics.NewBusObserver(cfg.Metrics.Registerer)
	if err != nil {
		return cfg, nil, fmt.Errorf("orchestrator metrics: %w", err)
	}
	return cfg, m, nil
}
