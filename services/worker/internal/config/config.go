// Package config reads the worker service's settings from BRAID_* environment
// variables. It is the only place in the service that reads the environment.
package config

import (
	"cmp"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/handler"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/worker/workersvc"
)

// Config is the worker service's environment. LLMAPIKey is a secret: never log a Config.
type Config struct {
	KafkaBrokers   []string      // BRAID_KAFKA_BROKERS, comma-separated; default 127.0.0.1:19092
	TopicPrefix    string        // BRAID_KAFKA_TOPIC_PREFIX; default ""
	Partitions     int           // BRAID_KAFKA_PARTITIONS for topics created at start-up; default 6
	RedisURL       string        // BRAID_REDIS_URL; default redis://127.0.0.1:16379/0
	RedisNamespace string        // BRAID_REDIS_NAMESPACE inserted after "braid:"; default ""
	WorkerID       string        // BRAID_WORKER_ID; default hostname-pid-random
	Concurrency    int           // BRAID_WORKER_CONCURRENCY, tasks run at once; default 4
	DrainTimeout   time.Duration // BRAID_WORKER_DRAIN_TIMEOUT, shutdown grace for running tasks; default 20s
	LLMBaseURL     string        // BRAID_LLM_BASE_URL, OpenAI-compatible API; default "" (mock completions)
	LLMAPIKey      string        // BRAID_LLM_API_KEY; default ""
	LogLevel       slog.Level    // BRAID_LOG_LEVEL debug|info|warn|error; default info
}

// Load reads the environment, reporting every malformed variable at once.
func Load() (Config, error) {
	c := Config{
		KafkaBrokers:   splitList(cmp.Or(os.Getenv("BRAID_KAFKA_BROKERS"), "127.0.0.1:19092")),
		TopicPrefix:    os.Getenv("BRAID_KAFKA_TOPIC_PREFIX"),
		RedisURL:       cmp.Or(os.Getenv("BRAID_REDIS_URL"), "redis://127.0.0.1:16379/0"),
		RedisNamespace: os.Getenv("BRAID_REDIS_NAMESPACE"),
		WorkerID:       os.Getenv("BRAID_WORKER_ID"),
		LLMBaseURL:     os.Getenv("BRAID_LLM_BASE_URL"),
		LLMAPIKey:      os.Getenv("BRAID_LLM_API_KEY"),
	}
	var errs []string
	var err error
	if c.Partitions, err = intEnv("BRAID_KAFKA_PARTITIONS", 6); err != nil {
		errs = append(errs, err.Error())
	}
	if c.Concurrency, err = intEnv("BRAID_WORKER_CONCURRENCY", 4); err != nil {
		errs = append(errs, err.Error())
	}
	if c.DrainTimeout, err = durationEnv("BRAID_WORKER_DRAIN_TIMEOUT", 20*time.Second); err != nil {
		errs = append(errs, err.Error())
	}
	if err := c.LogLevel.UnmarshalText([]byte(cmp.Or(os.Getenv("BRAID_LOG_LEVEL"), "info"))); err != nil {
		errs = append(errs, "BRAID_LOG_LEVEL: "+err.Error())
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

// Service returns the workersvc configuration these settings describe.
func (c Config) Service() workersvc.Config {
	return workersvc.Config{
		ID:           c.WorkerID,
		Bus:          eventbus.Config{Brokers: c.KafkaBrokers, ClientID: workersvc.ClientID, Partitions: c.Partitions, TopicPrefix: c.TopicPrefix},
		RedisURL:     c.RedisURL,
		Keys:         statestore.Keys{Namespace: c.RedisNamespace},
		Concurrency:  c.Concurrency,
		DrainTimeout: c.DrainTimeout,
		Handler:      handler.Config{LLMBaseURL: c.LLMBaseURL, LLMAPIKey: c.LLMAPIKey},
	}
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func intEnv(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return def, fmt.Errorf("%s=%q: want a positive integer", name, v)
	}
	return n, nil
}

func durationEnv(name string, def time.Duration) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return def, fmt.Errorf("%s=%q: want a positive duration like 20s", name, v)
	}
	return d, nil
}
