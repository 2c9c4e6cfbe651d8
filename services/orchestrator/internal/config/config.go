// Package config reads the orchestrator's settings from BRAID_* environment
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
)

// Config is the orchestrator's environment.
type Config struct {
	KafkaBrokers   []string      // BRAID_KAFKA_BROKERS, comma-separated; default 127.0.0.1:19092
	TopicPrefix    string        // BRAID_KAFKA_TOPIC_PREFIX; default ""
	Partitions     int           // BRAID_KAFKA_PARTITIONS for topics created at start-up; default 6
	RedisURL       string        // BRAID_REDIS_URL; default redis://127.0.0.1:16379/0
	RedisNamespace string        // BRAID_REDIS_NAMESPACE inserted after "braid:"; default ""
	ID             string        // BRAID_ORCHESTRATOR_ID; default hostname-pid
	LockTTL        time.Duration // BRAID_LOCK_TTL; default 6s
	LogLevel       slog.Level    // BRAID_LOG_LEVEL debug|info|warn|error; default info
}

// Load reads the environment, reporting every malformed variable at once.
func Load() (Config, error) {
	var errs []string
	c := Config{
		KafkaBrokers:   strings.Split(cmp.Or(os.Getenv("BRAID_KAFKA_BROKERS"), "127.0.0.1:19092"), ","),
		TopicPrefix:    os.Getenv("BRAID_KAFKA_TOPIC_PREFIX"),
		RedisURL:       cmp.Or(os.Getenv("BRAID_REDIS_URL"), "redis://127.0.0.1:16379/0"),
		RedisNamespace: os.Getenv("BRAID_REDIS_NAMESPACE"),
		ID:             os.Getenv("BRAID_ORCHESTRATOR_ID"),
	}
	var err error
	if c.Partitions, err = intEnv("BRAID_KAFKA_PARTITIONS", 6); err != nil {
		errs = append(errs, err.Error())
	}
	if c.LockTTL, err = durationEnv("BRAID_LOCK_TTL", 6*time.Second); err != nil {
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
		return def, fmt.Errorf("%s=%q: want a positive duration like 6s", name, v)
	}
	return d, nil
}
