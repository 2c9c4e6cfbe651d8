// Package opsserve serves what an operator and a container runtime ask a
// service that has no API of its own (the orchestrator, the worker):
// GET /healthz (the process answers: liveness, with its build), GET /readyz
// (every readiness check passes, else 503 naming each failure) and, when a
// registry is given, GET /metrics. Probe is the client side, for the
// `healthcheck` argument of each service binary (distroless images have no
// shell or curl for a Docker health check).
package opsserve

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sort"
	"time"

	"github.com/braidhq/braid/pkg/buildinfo"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// CheckTimeout bounds all readiness checks of one /readyz.
const CheckTimeout = 2 * time.Second

// Check is one readiness check: nil when ready.
type Check func(ctx context.Context) error

// Config says what to serve.
type Config struct {
	// Addr is host:port to listen on; empty means off.
	Addr string
	// Service names the service in /healthz.
	Service string
	// Ready are the readiness checks by name (e.g. "redis").
	Ready map[string]Check
	// Metrics, when set, is served at /metrics.
	Metrics prometheus.Gatherer
}

// Start listens on cfg.Addr and serves the ops endpoints in a goroutine
// (Listen). An empty Addr is off: it returns nil (Stop and Addr on a nil
// *Server are safe). A listen error is returned at once, so a bad address
// stops the service at start.
func Start(cfg Config, logger *slog.Logger) (*Server, error) {
	return Listen(cfg.Service+" ops endpoints (/healthz /readyz /metrics)", cfg.Addr, Handler(cfg), DefaultBounds, logger)
}

// Handler serves /healthz, /readyz and, with cfg.Metrics, /metrics.
func Handler(cfg Config) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		write(w, http.StatusOK, map[string]string{"status": "ok", "service": cfg.Service, "version": buildinfo.Get().String()})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), CheckTimeout)
		defer cancel()
		status, body := readiness(ctx, cfg.Ready)
		write(w, status, body)
	})
	if cfg.Metrics != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Metrics, promhttp.HandlerOpts{}))
	}
	return mux
}

// readiness runs every check and reports each.
func readiness(ctx context.Context, checks map[string]Check) (int, map[string]any) {
	names := make([]string, 0, len(checks))
	for n := range checks {
		names = append(names, n)
	}
	sort.Strings(names)
	out, status := map[string]string{}, http.StatusOK
	for _, n := range names {
		if err := checks[n](ctx); err != nil {
			out[n], status = err.Error(), http.StatusServiceUnavailable
			continue
		}
		out[n] = "ok"
	}
	word := "ok"
	if status != http.StatusOK {
		word = "unavailable"
	}
	return status, map[string]any{"status": word, "checks": out}
}

func write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
