// Package config reads the worker service's settings from BRAID_* environment
// variables. It is the only place in the service that reads the environment.
package config

import (
	"log/slog"
	"net"
	"time"

	"github.com/braidhq/braid/pkg/envconf"
	"github.com/braidhq/braid/pkg/handler"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/svcmain"
	"github.com/braidhq/braid/pkg/worker"
	"github.com/braidhq/braid/services/worker/workersvc"
	"github.com/redis/go-redis/v9"
)

// Config is the worker service's environment. LLMAPIKey is a secret: never log a Config.
type Config struct {
	envconf.Common
	WorkerID     string        // BRAID_WORKER_ID; default hostname-pid-random
	Concurrency  int           // BRAID_WORKER_CONCURRENCY, tasks run at once; default 4
	DrainTimeout time.Duration // BRAID_WORKER_DRAIN_TIMEOUT, shutdown grace for running tasks; default 20s
	Heartbeat    time.Duration // BRAID_WORKER_HEARTBEAT_INTERVAL, longest claim refresh period; default 5s
	Liveness     time.Duration // BRAID_WORKER_LIVENESS_TIMEOUT, silence after which the worker counts as dead; default 5s
	LLMBaseURL   string        // BRAID_LLM_BASE_URL, OpenAI-compatible API; default "" (mock completions)
	LLMAPIKey    string        // BRAID_LLM_API_KEY; default ""
	HTTPAddr     string        // BRAID_WORKER_HTTP_ADDR, where /healthz, /readyz and /metrics listen; default "" (off)
	PassEnv      []string      // BRAID_WORKER_PASS_ENV, variables shell tasks get besides the base set; default none
	Handlers     []string      // BRAID_WORKER_HANDLERS, the handlers this worker runs; default all
	SecretsDir   string        // BRAID_WORKER_SECRETS_DIR, a directory of files named after secrets; default "" (none)
	Ledger       string        // BRAID_WORKER_LEDGER, a file where simulate records each execution; default "" (off)
	// Secrets are the BRAID_SECRET_<NAME> variables by NAME. Never log them.
	Secrets map[string]string
	// HTTPAllow is BRAID_HTTP_ALLOW: the internal names, addresses and
	// ranges the http and llm handlers may reach (handler.ParseAllowList);
	// default none, only public addresses.
	HTTPAllow handler.AllowList
}

// SecretPrefix starts the name of each variable that holds a secret for
// tasks: BRAID_SECRET_TOKEN is << secret.TOKEN >>.
const SecretPrefix = "BRAID_SECRET_"

// Load reads the environment, reporting every malformed variable at once.
func Load() (Config, error) {
	r := envconf.New()
	c := Config{
		Common:       r.Common(),
		WorkerID:     r.String("BRAID_WORKER_ID", ""),
		Concurrency:  r.PositiveInt("BRAID_WORKER_CONCURRENCY", 4),
		DrainTimeout: r.Duration("BRAID_WORKER_DRAIN_TIMEOUT", 20*time.Second),
		Heartbeat:    r.Duration("BRAID_WORKER_HEARTBEAT_INTERVAL", 5*time.Second),
		Liveness:     r.Duration("BRAID_WORKER_LIVENESS_TIMEOUT", 5*time.Second),
		LLMBaseURL:   r.String("BRAID_LLM_BASE_URL", ""),
		LLMAPIKey:    r.String("BRAID_LLM_API_KEY", ""),
		HTTPAddr:     r.String("BRAID_WORKER_HTTP_ADDR", ""),
		PassEnv:      r.List("BRAID_WORKER_PASS_ENV", ""),
		Handlers:     r.List("BRAID_WORKER_HANDLERS", ""),
		SecretsDir:   r.String("BRAID_WORKER_SECRETS_DIR", ""),
		Ledger:       r.String("BRAID_WORKER_LEDGER", ""),
		Secrets:      nonEmpty(r.Prefixed(SecretPrefix)),
		HTTPAllow:    envconf.Parsed(r, "BRAID_HTTP_ALLOW", handler.ParseAllowList),
	}
	return c, r.Err()
}

// MainSettings is what svcmain.Main needs before running the worker.
func (c Config) MainSettings() svcmain.Settings {
	return svcmain.Settings{LogLevel: c.LogLevel, PprofAddr: c.PprofAddr, HealthAddr: c.HTTPAddr}
}

// Service returns the workersvc configuration these settings describe,
// with the client and logger main made. A
// configured BRAID_WORKER_ID is taken as a stable instance name: a worker
// restarted under it evicts its killed predecessor from the dispatch group
// (eventbus.Config.InstanceID) instead of waiting out its session.
func (c Config) Service(rdb redis.UniversalClient, logger *slog.Logger) workersvc.Config {
	bus := c.Common.Bus(workersvc.ClientID)
	bus.InstanceID = c.WorkerID
	return workersvc.Config{
		ID:                c.WorkerID,
		Bus:               bus,
		Redis:             rdb,
		Logger:            logger,
		Keys:              c.Keys(),
		Concurrency:       c.Concurrency,
		DrainTimeout:      c.DrainTimeout,
		HeartbeatInterval: c.Heartbeat,
		LivenessTimeout:   c.Liveness,
		Handler:           c.handlerConfig(),
		HTTPAddr:          c.HTTPAddr,
		Handlers:          c.Handlers,
		Secrets:           c.secrets(),
	}
}

// secrets is where tasks' secrets come from: BRAID_SECRET_<NAME> variables,
// then files in BRAID_WORKER_SECRETS_DIR; nil when neither is configured.
func (c Config) secrets() worker.Secrets {
	var chain worker.SecretChain
	if len(c.Secrets) > 0 {
		chain = append(chain, worker.SecretMap(c.Secrets))
	}
	if c.SecretsDir != "" {
		chain = append(chain, worker.SecretDir(c.SecretsDir))
	}
	if len(chain) == 0 {
		return nil
	}
	return chain
}

// nonEmpty drops empty values: an empty secret variable is treated as unset
// (a task referencing it fails, naming it, instead of running with "").
func nonEmpty(m map[string]string) map[string]string {
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	return m
}

// handlerConfig is the built-in handlers' configuration. The worker is strict:
// only public addresses and what BRAID_HTTP_ALLOW opens (unlike braid dev,
// it does not open loopback).
func (c Config) handlerConfig() handler.Config {
	return handler.Config{LLMBaseURL: c.LLMBaseURL, LLMAPIKey: c.LLMAPIKey, PassEnv: c.PassEnv, Ledger: c.Ledger,
		Egress: handler.Egress{Allow: c.HTTPAllow, Own: c.ownListeners()}}
}

// ownListeners are the addresses of the worker's own stack that no http or
// llm call may reach even when BRAID_HTTP_ALLOW covers them: its health and
// pprof ports, Redis and the Kafka brokers. Entries without a port (a
// unix-socket Redis) name nothing to dial and are left out.
func (c Config) ownListeners() []handler.Listener {
	var out []handler.Listener
	add := func(name, addr string) {
		if _, _, err := net.SplitHostPort(addr); err == nil {
			out = append(out, handler.Listener{Name: name, Addr: addr})
		}
	}
	add("worker health", c.HTTPAddr)
	add("pprof", c.PprofAddr)
	for _, a := range statestore.Addrs(c.RedisURL) {
		add("redis", a)
	}
	for _, b := range c.KafkaBrokers {
		add("kafka", b)
	}
	return out
}
