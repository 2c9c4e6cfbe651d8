package opsserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
)

// shutdownTimeout bounds how long Stop waits for requests in flight (a CPU
// profile request lasts as long as its ?seconds= asks).
const shutdownTimeout = 2 * time.Second

// Bounds are a server's limits on slow clients. The ops and pprof servers'
// clients are probes, scrapers and operators that send small requests, so
// every bound is short: a client that trickles its request or reads its
// answer slowly (slowloris) is cut off instead of holding a connection.
type Bounds struct {
	ReadHeader, Read, Write, Idle time.Duration
	MaxHeaderBytes                int
}

// DefaultBounds: WriteTimeout leaves a /metrics scrape and a /readyz
// (CheckTimeout) ample time; a CPU profile or trace needs no more, as
// net/http/pprof moves the write deadline by its ?seconds= itself.
var DefaultBounds = Bounds{ReadHeader: 5 * time.Second, Read: 10 * time.Second, Write: 30 * time.Second,
	Idle: time.Minute, MaxHeaderBytes: 64 << 10}

// server returns an http.Server of h within b.
func (b Bounds) server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: b.ReadHeader, ReadTimeout: b.Read,
		WriteTimeout: b.Write, IdleTimeout: b.Idle, MaxHeaderBytes: b.MaxHeaderBytes}
}

// Server is a running server; Stop it when the service stops.
type Server struct {
	srv  *http.Server
	done chan struct{}
	addr string
}

// Listen listens on addr and serves h within b in a goroutine; name says
// what in its log lines and errors. An empty addr is off: it returns nil
// (Stop and Addr on a nil *Server are safe). A listen error is returned at
// once, so a bad address stops the service at start.
func Listen(name, addr string, h http.Handler, b Bounds, logger *slog.Logger) (*Server, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s listen addr=%s: %w", name, addr, err)
	}
	s := &Server{srv: b.server(h), done: make(chan struct{}), addr: ln.Addr().String()}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(name+" stopped", logkey.Addr, s.addr, logkey.Err, err)
		}
	}()
	logger.Info(name+" listening", logkey.Addr, s.addr)
	return s, nil
}

// Addr is where the server listens ("" for a nil server).
func (s *Server) Addr() string {
	if s == nil {
		return ""
	}
	return s.addr
}

// Stop shuts the server down, waiting at most shutdownTimeout for requests
// in flight, then for its goroutine. It is safe on a nil *Server.
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
