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
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"time"

	"github.com/braidhq/braid/pkg/buildinfo"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// CheckTimeout bounds all readiness checks of one /readyz.
const CheckTimeout = 2 * time.Second

// shutdownTimeout bounds Stop.
const shutdownTimeout = 2 * time.Second

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

// Server is a running ops server; Stop it when the service stops.
type Server struct {
	srv  *http.Server
	done chan struct{}
	addr string
}

// bounds are the ops server's limits on slow clients. Its clients are
// probes and scrapers that send small requests and read small answers, so
// every bound is short: a client that trickles its request or reads its
// answer slowly (slowloris) is cut off instead of holding a connection.
type bounds struct {
	readHeader, read, write, idle time.Duration
	maxHeaderBytes                int
}

// defaultBounds: WriteTimeout leaves a /metrics scrape and a /readyz
// (CheckTimeout) ample time.
var defaultBounds = bounds{readHeader: 5 * time.Second, read: 10 * time.Second, write: 30 * time.Second,
	idle: time.Minute, maxHeaderBytes: 64 << 10}

// server returns an http.Server of h within b.
func (b bounds) server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: b.readHeader, ReadTimeout: b.read,
		WriteTimeout: b.write, IdleTimeout: b.idle, MaxHeaderBytes: b.maxHeaderBytes}
}

// Start listens on cfg.Addr and serves in a goroutine. An empty Addr is
// off: it returns nil (Stop and Addr on a nil *Server are safe). A listen
// error is returned at once, so a bad address stops the service at start.
func Start(cfg Config, logger *slog.Logger) (*Server, error) {
	return start(cfg, logger, defaultBounds)
}

func start(cfg Config, logger *slog.Logger, b bounds) (*Server, error) {
	if cfg.Addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("%s ops listen addr=%s: %w", cfg.Service, cfg.Addr, err)
	}
	s := &Server{srv: b.server(Handler(cfg)), done: make(chan struct{}), addr: ln.Addr().String()}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("ops server stopped", logkey.Addr, s.addr, logkey.Err, err)
		}
	}()
	logger.Info("ops endpoints listening: /healthz /readyz /metrics", logkey.Addr, s.addr)
	return s, nil
}

// Addr is where the server listens ("" for a nil server).
func (s *Server) Addr() string {
	if s == nil {
		return ""
	}
	return s.addr
}

// Stop shuts the server down and waits for it.
func (s *Server) Stop() {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
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
