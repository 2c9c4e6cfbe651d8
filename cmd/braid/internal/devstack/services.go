package devstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/handler"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/metrics"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/api/apisvc"
	"github.com/braidhq/braid/services/orchestrator/orchsvc"
	"github.com/braidhq/braid/services/worker/workersvc"
	"github.com/redis/go-redis/v9"
)

// redisDialTimeout bounds each service's first PING.
const redisDialTimeout = 10 * time.Second

// running is the set of started services, in start order.
type running struct {
	orchestrator *service
	workers      []*service
	api          *service
	clients      []redis.UniversalClient
	exits        chan exit
}

// startServices starts the orchestrator, the workers and the api on inf,
// each with its own Redis client (as separate processes would have).
func startServices(ctx context.Context, cfg Config, inf *infra, keySpec string) (*running, error) {
	keys, err := apisvc.ParseKeys(keySpec)
	if err != nil {
		return nil, fmt.Errorf("BRAID_API_KEYS: %w", err)
	}
	r := &running{exits: make(chan exit, cfg.Workers+2)}
	for range cfg.Workers + 2 {
		c, err := statestore.NewClient(ctx, inf.redisURL(), redisDialTimeout)
		if err != nil {
			r.closeClients()
			return nil, err
		}
		r.clients = append(r.clients, c)
	}
	// The services reach the broker of their own process through memory;
	// other processes (the CLI's tools, kcat) connect over TCP as before.
	bus := eventbus.Config{Brokers: []string{inf.kafkaAddr}, Dial: inf.brokerLn.Dial}
	reg := sharedRegistry() // every service's metrics, served at the api's /metrics
	log := cfg.Logger
	// The services outlive ctx (a signal): stop cancels each in turn.
	ctx = context.WithoutCancel(ctx)
	orchRedis, apiRedis := r.clients[0], r.clients[1]
	r.orchestrator = launch(ctx, "orchestrator", r.exits, func(ctx context.Context) error {
		// Stable names: `braid dev` restarted after a crash on the same data
		// dir takes its predecessor's run locks and group memberships over at
		// once (one `braid dev` per data dir, so no live process shares them).
		return orchsvc.Run(ctx, orchsvc.Config{ID: "dev-orchestrator", StableID: true, Bus: withClient(bus, "braid-orchestrator"),
			Redis: orchRedis, RunRetention: cfg.RunRetention, Logger: log.With(logkey.Service, "orchestrator"), Metrics: metrics.Shared(reg, "orchestrator")})
	})
	for i := range cfg.Workers {
		id, wc := fmt.Sprintf("dev-worker-%d", i+1), r.clients[2+i]
		r.workers = append(r.workers, launch(ctx, id, r.exits, func(ctx context.Context) error {
			wbus := bus
			wbus.InstanceID = id
			return workersvc.Run(ctx, workersvc.Config{ID: id, Bus: wbus, Redis: wc, Concurrency: cfg.WorkerConcurrency,
				Handler:  handler.Config{Egress: egress(cfg, inf), PassEnv: cfg.TaskEnv.PassEnv},
				Handlers: cfg.TaskEnv.Handlers, Secrets: cfg.TaskEnv.Secrets, Logger: log.With(logkey.Service, "worker"),
				Metrics: metrics.Shared(reg, "worker")}) // the workers share their collectors: counts add up
		}))
	}
	r.api = launch(ctx, "api", r.exits, func(ctx context.Context) error {
		return apisvc.Run(ctx, apisvc.Config{Addr: cfg.APIAddr, APIKeys: keys, Bus: bus,
			Redis: apiRedis, Logger: log.With(logkey.Service, "api"), Metrics: metrics.Shared(reg, "api")})
	})
	return r, nil
}

// withClient returns bus with its Kafka client id set.
func withClient(bus eventbus.Config, id string) eventbus.Config {
	bus.ClientID = id
	return bus
}

// stop stops the services in reverse order, each step bounded by timeout:
// the api first (no new requests), then the workers together (draining
// their tasks), then the orchestrator; then it closes the Redis clients.
func (r *running) stop(timeout time.Duration, log *slog.Logger) error {
	var errs []error
	log.Info("stopping the services", logkey.Window, timeout)
	step := func(name string, svcs ...*service) {
		start := time.Now()
		errs = append(errs, stopAll(svcs, timeout)...)
		log.Info("stopped", logkey.Step, name, logkey.Took, time.Since(start).Round(time.Millisecond))
	}
	step("api", r.api)
	step("workers", r.workers...)
	step("orchestrator", r.orchestrator)
	r.closeClients()
	return errors.Join(errs...)
}

// failed returns the first error a service returned on its own, if any.
func (r *running) failed() error {
	for _, s := range append([]*service{r.api, r.orchestrator}, r.workers...) {
		select {
		case <-s.done:
			if s.err != nil {
				return s.err
			}
		default:
		}
	}
	return nil
}

// closeClients closes every Redis client opened for the services.
func (r *running) closeClients() {
	for _, c := range r.clients {
		_ = c.Close()
	}
}
