package devstack

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/braidhq/braid/pkg/handler"
	"github.com/braidhq/braid/pkg/worker"
)

// Defaults of the dev stack's flags.
const (
	DefaultAPIAddr   = "127.0.0.1:8080"
	DefaultKafkaAddr = "127.0.0.1:19092"
	DefaultRedisAddr = "127.0.0.1:16379"
	DefaultDataDir   = ".braid"
	DefaultWorkers   = 2
	// DefaultWorkerConcurrency is 64 tasks per in-process worker: tasks
	// wait on I/O (HTTP calls, shell commands, sleeps) far more than they
	// use this process's CPU, and at 4 a 10,000-node noop fan-out took
	// 1.4 s instead of 0.5 s and a fan-out of HTTP calls ran 8 at a time.
	// The worker service keeps 4 (BRAID_WORKER_CONCURRENCY): its operators
	// size it for their tasks.
	DefaultWorkerConcurrency = 64
	DefaultShutdownTimeout   = 30 * time.Second
	DefaultReadyTimeout      = 60 * time.Second
)

// Config configures a dev stack. Flag names are given so that errors can
// tell the user which flag to change.
type Config struct {
	// DataDir holds kafka/, redis/ and api-key (--data-dir); default .braid.
	DataDir string
	// APIAddr is where the api listens (--addr); default 127.0.0.1:8080.
	APIAddr string
	// KafkaAddr is where the embedded broker listens (--kafka-addr); default 127.0.0.1:19092.
	KafkaAddr string
	// RedisAddr is where Redis listens (--redis-addr); default 127.0.0.1:16379.
	RedisAddr string
	// Workers is how many workers run in-process (--workers); default 2.
	Workers int
	// WorkerConcurrency is how many tasks each worker runs at once; default 64.
	WorkerConcurrency int
	// OnlyInfra starts only the broker and Redis (--only infra).
	OnlyInfra bool
	// EmbeddedRedis forces the in-memory miniredis even when redis-server is installed.
	EmbeddedRedis bool
	// HTTPAllow is BRAID_HTTP_ALLOW: internal destinations the http and llm
	// nodes may reach besides loopback.
	HTTPAllow handler.AllowList
	// RefuseLoopback makes the workers refuse loopback as braid-worker does
	// (--allow-loopback=false). By default braid dev opens loopback, so that
	// workflows can call services on the developer's machine; the stack's
	// own ports (api, broker, Redis) stay refused either way.
	RefuseLoopback bool
	// APIKeys is BRAID_API_KEYS ("name:key:role,..."); when empty a key is
	// generated once and kept in <DataDir>/api-key.
	APIKeys string
	// TaskEnv is what the workers give tasks beyond the defaults: variables
	// passed on (BRAID_WORKER_PASS_ENV), the handlers they run
	// (BRAID_WORKER_HANDLERS) and secrets (BRAID_SECRET_<NAME>,
	// BRAID_WORKER_SECRETS_DIR), as for the worker service.
	TaskEnv TaskEnv
	// RunRetention is BRAID_RUN_RETENTION: how long the orchestrator keeps
	// ended runs; zero is its default (a week), negative keeps them for ever.
	RunRetention time.Duration
	// ShutdownTimeout bounds each shutdown step; default 30s.
	ShutdownTimeout time.Duration
	// ReadyTimeout bounds the wait for the api's /readyz; default 60s.
	ReadyTimeout time.Duration
	// Out receives the banner (URLs, key, examples); default os.Stdout.
	Out io.Writer
	// Logger receives the services' structured logs; default slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	c.DataDir = cmp.Or(c.DataDir, DefaultDataDir)
	c.APIAddr = cmp.Or(c.APIAddr, DefaultAPIAddr)
	c.KafkaAddr = cmp.Or(c.KafkaAddr, DefaultKafkaAddr)
	c.RedisAddr = cmp.Or(c.RedisAddr, DefaultRedisAddr)
	c.Workers = cmp.Or(c.Workers, DefaultWorkers)
	c.WorkerConcurrency = cmp.Or(c.WorkerConcurrency, DefaultWorkerConcurrency)
	c.ShutdownTimeout = cmp.Or(c.ShutdownTimeout, DefaultShutdownTimeout)
	c.ReadyTimeout = cmp.Or(c.ReadyTimeout, DefaultReadyTimeout)
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// validate reports every invalid field of a defaulted config, naming flags.
func (c Config) validate() error {
	var errs []error
	for _, a := range []struct{ flag, addr string }{
		{"--addr", c.APIAddr}, {"--kafka-addr", c.KafkaAddr}, {"--redis-addr", c.RedisAddr},
	} {
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: want host:port", a.flag, a.addr))
		}
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("--workers %d: want 1 or more", c.Workers))
	}
	if c.WorkerConcurrency < 1 {
		errs = append(errs, fmt.Errorf("--worker-concurrency %d: want 1 or more", c.WorkerConcurrency))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("braid dev: %w", err)
	}
	return nil
}

// TaskEnv is the workers' task-facing settings.
type TaskEnv struct {
	PassEnv  []string
	Handlers []string
	Secrets  worker.Secrets
}
