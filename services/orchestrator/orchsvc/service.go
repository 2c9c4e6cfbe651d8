package orchsvc

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
)

// Service is one orchestrator. Its event loop is a single goroutine, so the
// owned-run cache needs no locking; the timer poller runs beside it and only
// publishes.
type Service struct {
	cfg    Config
	log    *slog.Logger
	rdb    redis.UniversalClient
	keys   statestore.Keys
	locker *redislock.Client
	cons   consumer
	prod   producer
	plans  *planCache
	owned  map[string]*owned
	fences fenceMemory   // fences got lately, to tell takeovers (takeover.go)
	offers handlerOffers // the handlers live workers offer, for the reconciler (offers.go)
	leases *leases
	// maintLease and sched are the cluster-wide duties (dutylease.go).
	maintLease *leaderLease
	sched      *scheduler
	// pruned is when owned was last swept of runs whose lock is gone.
	pruned time.Time
	// stopping closes when Run's context ends (ends publish retries).
	stopping <-chan struct{}
	metrics  *orchMetrics // metrics.go

	// StaleWrites counts writes the fence refused (a lock lost mid-batch).
	StaleWrites atomic.Int64
	// WorkersLost counts registered workers found dead (liveness lapsed
	// without a graceful stop).
	WorkersLost atomic.Int64
	// LostAttempts counts attempts declared lost with their worker.
	LostAttempts atomic.Int64
	// RunsPruned counts ended runs deleted past the retention (prune.go).
	RunsPruned atomic.Int64
}

// New validates cfg and connects to Kafka. Call Run to start.
func New(ctx context.Context, cfg Config) (*Service, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := eventbus.EnsureTopics(ctx, cfg.Bus, eventsv1.Topics...); err != nil {
		return nil, fmt.Errorf("orchestrator: %w", err)
	}
	if err := statestore.LoadScripts(ctx, cfg.Redis); err != nil {
		return nil, fmt.Errorf("orchestrator: %w", err)
	}
	if err := cfg.Keys.CheckLayout(ctx, cfg.Redis); err != nil {
		return nil, fmt.Errorf("orchestrator: %w", err)
	}
	cfg, m, err := instrument(cfg)
	if err != nil {
		return nil, err
	}
	prod, err := eventbus.NewProducer(cfg.Bus)
	if err != nil {
		return nil, fmt.Errorf("orchestrator producer: %w", err)
	}
	cons, err := eventbus.NewConsumer(ctx, cfg.Bus, cfg.Group,
		eventsv1.TopicWorkflowStart, eventsv1.TopicWorkflowControl, eventsv1.TopicTaskComplete)
	if err != nil {
		_ = prod.Close()
		return nil, fmt.Errorf("orchestrator consumer: %w", err)
	}
	log := cfg.Logger.With(logkey.Component, "orchestrator", logkey.OrchestratorID, cfg.ID)
	if err := prod.Prepare(ctx, eventsv1.TopicTaskDispatch, eventsv1.TopicWorkflowEvents, eventsv1.TopicWorkflowStart); err != nil {
		log.Warn("producer not prepared: the first dispatch connects", logkey.Err, err)
	}
	locker := redislock.New(cfg.Redis)
	s := &Service{
		cfg: cfg, log: log, rdb: cfg.Redis, keys: cfg.Keys, locker: locker,
		cons: cons, prod: prod, owned: map[string]*owned{}, fences: fenceMemory{},
		leases:     newLeases(cfg.Redis, cfg.Keys, cfg.LockTTL, cfg.IdleRelease, cfg.Logger.With(logkey.Component, "orchestrator-leases")),
		plans:      &planCache{rdb: cfg.Redis, keys: cfg.Keys, m: map[string]*core.Plan{}},
		maintLease: newLeaderLease(locker, cfg.Keys.Leader("maintenance"), cfg, log), metrics: m,
	}
	s.sched = newScheduler(cfg, prod, locker)
	s.sched.metrics = m
	m.svc.Store(s)
	return s, nil
}

// Run handles events until ctx is done, then stops consuming, finishes the
// batch in hand, releases its locks and closes its clients. It returns
// once every goroutine it started has returned.
func (s *Service) Run(ctx context.Context) error {
	defer s.close(ctx)
	s.stopping = ctx.Done()
	ops, err := s.serveOps(ctx, s.cfg.MetricsAddr)
	if err != nil {
		return err
	}
	batches := make(chan []eventbus.Message)
	commits := eventbus.NewCommitter(s.cons, eventbus.DefaultCommitDelay, s.log)
	stopBackground := s.startBackground(ctx, batches)
	defer func() {
		ops.Stop()       // metrics and readiness off first
		stopBackground() // fetching, duties and lock refreshes stopped and joined
		commits.Close()  // the last commits land before close() leaves the group
		s.releaseDuties(ctx)
	}()
	s.log.Info("orchestrator started", logkey.Group, s.cfg.Group)
	for {
		select {
		case <-ctx.Done():
			return nil
		case msgs := <-batches:
			s.handleBatch(ctx, msgs, commits)
			s.pruneOwned(time.Now())
		}
	}
}

// startBackground starts the goroutines beside the event loop: the fetch
// pump, the cluster-wide duties and the run locks' keep-alive. The func it
// returns cancels them and waits until all have returned.
func (s *Service) startBackground(ctx context.Context, batches chan<- []eventbus.Message) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.pump(ctx, batches) })
	wg.Go(func() { s.maintain(ctx) })
	wg.Go(func() { s.sched.run(ctx) })
	wg.Go(func() { s.leases.keepAlive(ctx, min(s.cfg.LockTTL/3, s.cfg.IdleRelease/2)) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// releaseDuties gives up the leader leases once their loops have stopped,
// so another orchestrator takes over at once rather than after LeaderTTL.
// ctx has ended by then: the releases get a bound of their own.
func (s *Service) releaseDuties(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	s.maintLease.release(ctx)
	s.sched.lease.release(ctx)
}

// pump fetches batches; the unbuffered channel keeps at most one batch
// waiting while another is handled. Fetch errors (broker down) are retried.
func (s *Service) pump(ctx context.Context, out chan<- []eventbus.Message) {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		msgs, err := s.cons.Fetch(ctx, s.cfg.BatchMax)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("fetch failed; retrying", logkey.Err, err, logkey.Backoff, backoff)
				_ = clock.Sleep(ctx, backoff) // cut short: the loop ends
				backoff = min(2*backoff, 5*time.Second)
			}
			continue
		}
		backoff = 50 * time.Millisecond
		select {
		case out <- msgs:
		case <-ctx.Done():
			return
		}
	}
}

// close lets go of the runs' locks and closes the Kafka clients. Run's ctx
// has ended by then: the releases get a bound of their own.
func (s *Service) close(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	s.disownAll(ctx)
	if err := s.cons.Close(); err != nil {
		s.log.Warn("close consumer", logkey.Err, err)
	}
	if err := s.prod.Close(); err != nil {
		s.log.Warn("close producer", logkey.Err, err)
	}
	s.log.Info("orchestrator stopped")
}
