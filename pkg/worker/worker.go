package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
)

// ioTimeout bounds every Redis call the runtime makes.
const ioTimeout = 5 * time.Second

// Worker executes the dispatches of task.dispatch with its handlers. Create
// it with New and call Run once.
type Worker struct {
	cfg      Config
	log      *slog.Logger
	rdb      redis.UniversalClient
	keys     statestore.Keys
	claims   claimStore // the claim path's store: cfg.Keys on cfg.Redis
	handlers []string   // sorted names, for the registry and logs
	// holder is the value of this process's claims: its incarnation and id
	// (records.Holder). A restart under the same id is a new incarnation,
	// which makes the old one's claims recognisably orphaned.
	holder records.Holder

	slots    chan struct{} // one token per free executor
	work     chan *attempt // claimed attempts for the executors
	out      *outbox
	commits  *eventbus.Committer // settled dispatches' offsets (set by Run)
	inflight *inflight
	recent   *recent
	stats    counters
	metrics  *workerMetrics // metrics.go
	running  atomic.Bool
	started  time.Time
	// beats counts the attempts' heartbeats: a timer armed at claim time on
	// the fetch path, then the goroutine (keepAlive) it starts when the
	// first beat is due; shutdown waits for them.
	beats sync.WaitGroup
}

// New validates cfg, applies its defaults and returns a Worker. It connects
// to nothing: Run does.
func New(cfg Config) (*Worker, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(cfg.Handlers))
	for name := range cfg.Handlers {
		names = append(names, name)
	}
	slices.Sort(names)
	m, err := newWorkerMetrics(cfg.Metrics, names)
	if err != nil {
		return nil, err
	}
	rec := newRecent()
	w := &Worker{metrics: m,
		cfg: cfg, rdb: cfg.Redis, keys: cfg.Keys, handlers: names,
		claims:   statestore.Store{Keys: cfg.Keys, RDB: cfg.Redis},
		holder:   records.Holder{Incarnation: newIncarnation(), Worker: cfg.ID},
		log:      cfg.Logger.With(logkey.Component, "worker", logkey.WorkerID, cfg.ID),
		slots:    make(chan struct{}, cfg.Concurrency),
		work:     make(chan *attempt, cfg.Concurrency),
		out:      newOutbox(),
		recent:   rec,
		inflight: newInflight(rec),
	}
	for range cfg.Concurrency {
		w.slots <- struct{}{}
	}
	return w, nil
}

// ID returns the worker's id (Config.ID or the generated default).
func (w *Worker) ID() string { return w.cfg.ID }

// Holder returns the value this process stores in the claims it holds:
// its incarnation and id (records.Holder).
func (w *Worker) Holder() string { return w.holder.String() }

// Run consumes and executes dispatches until ctx is done, then shuts down
// gracefully (see the package doc) and returns nil. Shutting down takes at
// most about DrainTimeout plus a few seconds. Every goroutine Run started
// has returned by then — the executors, each attempt's heartbeats and start
// notice, the publisher, the maintenance and liveness loops — except the
// executor of a handler that ignored cancellation for handbackGrace after
// the drain (its attempt is handed back without it). Kafka and Redis errors
// while running are logged and retried; Run returns an error only if it
// cannot create its Kafka clients (or is called a second time).
//
// The topics must exist (eventbus.EnsureTopics with task.dispatch and
// task.complete, which also creates task.dispatch.dlq).
func (w *Worker) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("worker: Run called more than once")
	}
	prod, err := eventbus.NewProducer(w.cfg.Bus)
	if err != nil {
		return fmt.Errorf("worker %s producer: %w", w.cfg.ID, err)
	}
	cons, err := eventbus.NewConsumer(ctx, w.cfg.Bus, w.cfg.Group, eventsv1.TopicTaskDispatch)
	if err != nil {
		_ = prod.Close()
		return fmt.Errorf("worker %s consumer: %w", w.cfg.ID, err)
	}
	if err := prod.Prepare(ctx, eventsv1.TopicTaskComplete); err != nil {
		w.log.Warn("producer not prepared: the first result connects", logkey.Err, err)
	}
	r := w.start(ctx, prod, cons)
	w.commits = eventbus.NewCommitter(cons, eventbus.DefaultCommitDelay, w.log)
	w.log.Info("worker started", logkey.Handlers, w.handlers, logkey.Concurrency, w.cfg.Concurrency, logkey.Group, w.cfg.Group)
	err = w.fetchLoop(ctx, cons, prod)
	w.shutdown(ctx, r)
	return err
}

// Stats counts what a Worker did since New.
type Stats struct {
	Executed   int64 // attempts whose handler was called
	Dropped    int64 // dispatches not claimed: duplicate, stale, finished or unknown attempt
	Ahead      int64 // dispatches whose first claim came before their attempt was stored (claimed again)
	Poison     int64 // dispatches sent to the dead-letter topic
	Skipped    int64 // dispatches of handlers this worker does not offer, left unclaimed for the pools that do
	Stopped    int64 // attempts stopped because their heartbeat was refused
	HandedBack int64 // attempts cancelled at shutdown whose claim was released
	Published  int64 // TaskResults acknowledged by Kafka, start notices included
}

type counters struct {
	executed, dropped, ahead, poison, skipped, stopped, handedBack, published atomic.Int64
}

// Stats returns the current counts. Safe for concurrent use.
func (w *Worker) Stats() Stats {
	c := &w.stats
	return Stats{
		Executed: c.executed.Load(), Dropped: c.dropped.Load(), Ahead: c.ahead.Load(), Poison: c.poison.Load(),
		Skipped: c.skipped.Load(), Stopped: c.stopped.Load(), HandedBack: c.handedBack.Load(),
		Published: c.published.Load(),
	}
}

// io returns a context for one Redis call made on behalf of the worker itself
// (not of a handler): ctx's values without its cancellation, bounded by
// ioTimeout. A call is never cut short by the end of ctx, so that what the
// worker does while stopping (claims, hand-backs, log flushes, removing its
// registry entry) is done whichever of its contexts has ended.
func (w *Worker) io(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), ioTimeout)
}
