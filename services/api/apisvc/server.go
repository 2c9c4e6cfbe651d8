package apisvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
)

// Server is the api: an http.Handler plus the producer and the events
// consumer behind it. Build it with New; call Close when done.
type Server struct {
	cfg     Config
	log     *slog.Logger
	rdb     redis.UniversalClient
	keys    statestore.Keys
	ring    *keyring
	prod    publisher
	feed    *feed
	hub     *hub
	defs    *defCache
	layouts layoutCache  // computed graph layouts by workflow version (layout.go)
	latest  *latestCache // each workflow's latest version as last read (latest.go)
	endings *endings     // requests waiting for runs to end (endings.go)
	rates   *buckets     // per-client request rate (ratelimit.go); nil: no limit
	streams *slots       // per-client open SSE streams (clients.go); nil: no limit
	waits   *slots       // per-client waiting requests; nil: no limit
	metrics *apiMetrics
	engine  *gin.Engine

	closing   chan struct{} // closed when shutdown begins: streams end, readiness fails
	unlisten  context.CancelFunc
	listening chan struct{} // closed when the run-ended subscription is gone
	closeOnce sync.Once
	closeErr  error
}

// New validates cfg, creates the topics the api uses when missing, opens a
// producer; workflow.events is read only while SSE streams watch runs (feed).
// ctx bounds start-up only; call Close to stop the consumer and producer.
func New(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ring, _ := newKeyring(cfg.APIKeys) // validate checked it
	m, err := newMetrics(&cfg)
	if err != nil {
		return nil, err
	}
	if err := cfg.Keys.CheckLayout(ctx, cfg.Redis); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	topics := []string{eventsv1.TopicWorkflowStart, eventsv1.TopicWorkflowControl, eventsv1.TopicWorkflowEvents}
	if err := eventbus.EnsureTopics(ctx, cfg.Bus, topics...); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	prod, err := eventbus.NewProducer(cfg.Bus)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	s := &Server{
		cfg: cfg, log: cfg.Logger.With(logkey.Component, "api"), rdb: cfg.Redis, keys: cfg.Keys, ring: ring,
		prod: prod, hub: newHub(cfg.SSEBuffer), defs: newDefCache(cfg.Redis, cfg.Keys), latest: newLatestCache(), metrics: m,
		closing: make(chan struct{}), endings: newEndings(cfg.MaxWaiters, cfg.WaitLinger), listening: make(chan struct{}),
		rates: newBuckets(cfg.RateLimit, cfg.RateBurst), streams: newSlots(cfg.MaxStreamsPerKey), waits: newSlots(cfg.MaxWaitersPerKey),
	}
	s.feed = newFeed(cfg.Bus, s.hub, cfg.FeedLinger, s.log)
	if err := prod.Prepare(ctx, eventsv1.TopicWorkflowStart, eventsv1.TopicWorkflowControl); err != nil {
		s.log.Warn("producer not prepared: the first run request connects", logkey.Err, err)
	}
	// The listener outlives ctx, which bounds start-up only: Close ends it.
	lctx, unlisten := context.WithCancel(context.WithoutCancel(ctx))
	s.unlisten = unlisten
	go func() {
		defer close(s.listening)
		var wg sync.WaitGroup
		wg.Go(func() {
			s.endings.recheck(lctx, s.cfg.WaitRecheck, func(ctx context.Context, runs []string) ([]string, error) {
				ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
				defer cancel()
				return s.keys.RunStatuses(ctx, s.rdb, runs)
			}, s.log)
		})
		s.endings.listen(lctx, s.rdb, s.keys.EndedChannel(), s.log)
		wg.Wait()
	}()
	s.engine = s.routes()
	return s, nil
}

// Handler returns the api's HTTP handler.
func (s *Server) Handler() http.Handler { return s.engine }

// Close ends open streams, closes the events feed and the
// producer. It does not close Config.Redis. Safe to call twice.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.beginShutdown()
		s.unlisten()
		<-s.listening
		s.closeErr = errors.Join(s.feed.stop(), s.prod.Close())
	})
	return s.closeErr
}

// beginShutdown turns readiness off and ends every SSE and log stream, so
// that http.Server.Shutdown does not wait for them.
func (s *Server) beginShutdown() {
	select {
	case <-s.closing:
	default:
		close(s.closing)
	}
}

// Serve serves the api on ln until ctx ends, then shuts down gracefully:
// readiness off, streams ended, in-flight requests finished (at most
// ShutdownTimeout). It does not Close s.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler: s.engine,
		// Slow clients: each bound below ends a connection that trickles its
		// headers or body, or reads its response slowly (slowloris). Streams
		// and ?wait= requests move their write deadline (deadlines.go).
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.log.Info("api listening", logkey.Addr, ln.Addr().String())
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.beginShutdown()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down api: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	return nil
}

// Run builds a Server from cfg, listens on cfg.Addr and serves until ctx
// ends, then shuts down gracefully and closes the server.
func Run(ctx context.Context, cfg Config) error {
	s, err := New(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("api listen %s: %w", s.cfg.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// requestCtx bounds a handler's calls to Redis and Kafka.
func (s *Server) requestCtx(c *gin.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Request.Context(), s.cfg.RequestTimeout)
}

// cleanupTimeout bounds undoing a failed request's writes.
const cleanupTimeout = 5 * time.Second

// cleanupCtx is for undoing writes after a request failed: it outlives
// ctx's cancellation but not cleanupTimeout.
func cleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}
