package orchsvc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsShutdown bounds the metrics server's graceful stop.
const metricsShutdown = 2 * time.Second

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

// serveMetrics listens on addr and serves GET /metrics until ctx ends. It
// returns once the listener is bound (or failed to bind).
func (s *Service) serveMetrics(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("orchestrator metrics listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.registry(), promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Warn("metrics server", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), metricsShutdown)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	s.log.Info("metrics listening", "addr", ln.Addr().String())
	return nil
}
