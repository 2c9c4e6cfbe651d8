// Package workersvc wires Braid's worker service: Kafka topics, the
// built-in handlers of pkg/handler, the pkg/worker runtime and its health
// endpoints. Run(ctx, Config) is the shape of all three services: the
// caller owns the Redis client and the logger, passed in Config, and Run
// returns once everything it started has stopped. It is exported so that
// `braid dev` and the e2e suite can run workers in one process with the
// other services.
package workersvc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/handler"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/metrics"
	"github.com/braidhq/braid/pkg/opsserve"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/worker"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
)

// ClientID is the Kafka client id of worker services.
const ClientID = "braid-worker"

// Config configures one worker service. Zero fields take pkg/worker's defaults.
type Config struct {
	// ID names the worker; default "<hostname>-<pid>-<random hex>".
	ID string
	// Bus is the Kafka configuration; an empty ClientID becomes ClientID.
	Bus eventbus.Config
	// Redis is the state store client (required); the caller closes it
	// after Run returns.
	Redis redis.UniversalClient
	// Logger receives the worker's logs; default slog.Default().
	Logger *slog.Logger
	// Keys builds Redis keys (its Namespace isolates tests and tenants).
	Keys statestore.Keys
	// Concurrency is the most tasks run at once (BRAID_WORKER_CONCURRENCY); default 4.
	Concurrency int
	// DrainTimeout bounds how long in-flight tasks may finish on shutdown; default 20s.
	DrainTimeout time.Duration
	// HeartbeatInterval is the longest a running task's claim goes
	// unrefreshed (BRAID_WORKER_HEARTBEAT_INTERVAL); a task whose node has a
	// heartbeat_timeout under three intervals is refreshed every third of
	// its timeout instead. Default 5s.
	HeartbeatInterval time.Duration
	// LivenessTimeout is how long after its last liveness renewal the
	// worker counts as dead and its tasks run again elsewhere; default
	// worker.DefaultLivenessTimeout (5s).
	LivenessTimeout time.Duration
	// Handler configures the built-in handlers (LLM endpoint and key, output caps).
	Handler handler.Config
	// Extra handlers are added to the built-ins; one with a built-in's name replaces it.
	Extra map[string]worker.Handler
	// Handlers, when set, are the only handlers this worker runs
	// (BRAID_WORKER_HANDLERS): a dispatch for another fails permanently,
	// naming the worker. Every name must be a known handler.
	Handlers []string
	// Secrets resolves << secret.NAME >> in task configs (nil: none).
	Secrets worker.Secrets
	// HTTPAddr, when set, serves /healthz, /readyz (Redis answers, the
	// worker runs), /metrics and the probe of `braid-worker healthcheck`
	// (opsserve).
	HTTPAddr string
	// Metrics is where the worker registers its collectors and what its
	// /metrics serves; default (zero) a fresh registry of its own.
	Metrics metrics.Registry
}

// Run runs a worker until ctx is done, then drains it (see pkg/worker) and
// returns nil once every goroutine it started has returned; it returns an
// error when it cannot start or fetching fails.
func Run(ctx context.Context, cfg Config) error {
	cfg.Bus.ClientID = cmp.Or(cfg.Bus.ClientID, ClientID)
	logger := cmp.Or(cfg.Logger, slog.Default())
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	// EnsureTopics also creates each topic's dead-letter topic.
	if err := eventbus.EnsureTopics(ctx, cfg.Bus, eventsv1.TopicTaskDispatch, eventsv1.TopicTaskComplete); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	reapOrphans(cfg.ID, logger)
	eg := cfg.Handler.Egress
	logger.Info("http and llm egress: public addresses, the LLM endpoint and what is allowed",
		logkey.Allow, eg.Allow.String(), logkey.AllowLoopback, eg.AllowLoopback, logkey.OwnListenersRefused, len(eg.Own))
	handlers, err := enabledHandlers(cfg)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if cfg, err = instrument(cfg); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	w, err := worker.New(worker.Config{Metrics: cfg.Metrics.Registerer,
		ID: cfg.ID, Bus: cfg.Bus, Redis: cfg.Redis, Keys: cfg.Keys, Handlers: handlers, Secrets: cfg.Secrets,
		Concurrency: cfg.Concurrency, DrainTimeout: cfg.DrainTimeout, HeartbeatInterval: cfg.HeartbeatInterval, LivenessTimeout: cfg.LivenessTimeout, Logger: logger,
	})
	if err != nil {
		return err
	}
	ops, err := opsserve.Start(opsserve.Config{Addr: cfg.HTTPAddr, Service: "worker", Metrics: cfg.Metrics.Gatherer, Ready: map[string]opsserve.Check{
		"redis":  func(ctx context.Context) error { return cfg.Redis.Ping(ctx).Err() },
		"worker": func(context.Context) error { return ctx.Err() }, // stopping: not ready
	}}, logger)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer ops.Stop()
	return w.Run(ctx)
}

func (c Config) validate() error {
	if c.Redis == nil {
		return errors.New("workersvc: a Redis client is required (Config.Redis)")
	}
	return c.Handler.Validate()
}

// reapOrphans kills what shell tasks of a killed predecessor under the same
// stable id left running; without a configured id there is none.
func reapOrphans(id string, logger *slog.Logger) {
	if id == "" {
		return
	}
	n, err := handler.ReapOrphans(id)
	switch {
	case err != nil:
		logger.Warn("reap orphaned shell tasks", logkey.Err, err)
	case n > 0:
		logger.Warn("killed processes left by shell tasks of a killed predecessor", logkey.WorkerID, id, logkey.Processes, n)
	}
}

// enabledHandlers is the built-ins plus cfg.Extra, narrowed to cfg.Handlers
// when it is set.
func enabledHandlers(cfg Config) (map[string]worker.Handler, error) {
	all := handler.Builtins(cfg.Handler)
	maps.Copy(all, cfg.Extra)
	if len(cfg.Handlers) == 0 {
		return all, nil
	}
	out := make(map[string]worker.Handler, len(cfg.Handlers))
	for _, name := range cfg.Handlers {
		h, ok := all[name]
		if !ok {
			return nil, fmt.Errorf("BRAID_WORKER_HANDLERS: unknown handler %q (known: %s)", name, strings.Join(slices.Sorted(maps.Keys(all)), ", "))
		}
		out[name] = h
	}
	return out, nil
}
