// Package pprofserve serves the Go runtime profiles (net/http/pprof) on an
// opt-in address, so a running service can be profiled with
// `go tool pprof http://ADDR/debug/pprof/profile`. Services turn it on with
// BRAID_PPROF_ADDR; it is off by default. The profiles reveal internals
// (goroutine stacks, command lines), so bind it to loopback or a private
// interface only: it has no authentication.
package pprofserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
)

// shutdownTimeout bounds how long Stop waits for profile requests in flight
// (a CPU profile request lasts as long as its ?seconds= asks).
const shutdownTimeout = 2 * time.Second

// Server is a running profile server. Stop it with Stop.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// bounds are the server's limits on slow clients: a client that trickles
// its request or reads its answer slowly (slowloris) is cut off instead of
// holding a connection.
type bounds struct {
	readHeader, read, write, idle time.Duration
	maxHeaderBytes                int
}

// defaultBounds. WriteTimeout need not cover a CPU profile or trace's
// ?seconds=: net/http/pprof moves the write deadline by that much itself.
var defaultBounds = bounds{readHeader: 5 * time.Second, read: 10 * time.Second, write: 30 * time.Second,
	idle: time.Minute, maxHeaderBytes: 64 << 10}

// server returns an http.Server of h within b.
func (b bounds) server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: b.readHeader, ReadTimeout: b.read,
		WriteTimeout: b.write, IdleTimeout: b.idle, MaxHeaderBytes: b.maxHeaderBytes}
}

// Start listens on addr (host:port) and serves /debug/pprof/ there in a
// goroutine. An empty addr means off: Start returns nil and no error, and
// Stop on a nil *Server does nothing. A listen error is returned at once,
// so a bad BRAID_PPROF_ADDR stops the service at start-up.
func Start(addr string, logger *slog.Logger) (*Server, error) {
	return start(addr, logger, defaultBounds)
}

func start(addr string, logger *slog.Logger, b bounds) (*Server, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof listen addr=%s: %w", addr, err)
	}
	s := &Server{srv: b.server(Handler()), ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("pprof server stopped", logkey.Addr, ln.Addr().String(), logkey.Err, err)
		}
	}()
	logger.Info("pprof listening", logkey.Addr, ln.Addr().String())
	return s, nil
}

// Addr is the address the server listens on (useful with port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Stop shuts the server down, waiting at most shutdownTimeout for requests
// in flight. It is safe on a nil *Server and safe to call twice.
func (s *Server) Stop() {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
}

// Handler returns a mux with the net/http/pprof endpoints under
// /debug/pprof/, built without touching http.DefaultServeMux.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
