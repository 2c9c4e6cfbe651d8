package orchsvc

import (
	"context"
	"fmt"

	"github.com/braidhq/braid/pkg/opsserve"
	"github.com/prometheus/client_golang/prometheus"
)

// registry returns the orchestrator's Prometheus metrics.
func (s *Service) registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "braid_orchestrator_stale_writes_total",
		Help: "State writes the per-run fence refused because another orchestrator took the run's lock.",
	}, func() float64 { return float64(s.StaleWrites.Load()) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "braid_orchestrator_workers_lost_total",
		Help: "Registered workers found dead: their liveness lapsed without a graceful stop.",
	}, func() float64 { return float64(s.WorkersLost.Load()) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "braid_orchestrator_attempts_lost_total",
		Help: "Attempts lost with their worker and dispatched again without consuming a retry.",
	}, func() float64 { return float64(s.LostAttempts.Load()) }))
	return reg
}

// serveOps serves /metrics, /healthz and /readyz (Redis answers, the
// service is not stopping) on addr until the caller stops the server; an
// empty addr serves nothing (a nil server, whose Stop does nothing).
func (s *Service) serveOps(ctx context.Context, addr string) (*opsserve.Server, error) {
	srv, err := opsserve.Start(opsserve.Config{Addr: addr, Service: "orchestrator", Metrics: s.registry(), Ready: map[string]opsserve.Check{
		"redis":        func(c context.Context) error { return s.rdb.Ping(c).Err() },
		"orchestrator": func(context.Context) error { return ctx.Err() },
	}}, s.log)
	if err != nil {
		return nil, fmt.Errorf("orchestrator: %w", err)
	}
	return srv, nil
}
