// Package config reads the api service's settings from BRAID_* environment
// variables. It is the only place in the service that reads the environment.
package config

import (
	"cmp"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
)

// DefaultMaxBody is the default request body limit in bytes (2 MiB).
const DefaultMaxBody = 2 << 20

// Config is the api service's environment.
type Config struct {
	Addr           string     // BRAID_API_ADDR, host:port to listen on; default 127.0.0.1:8080
	APIKeys        string     // BRAID_API_KEYS, "name:key:role[,name:key:role]"; never logged
	AuthOff        bool       // BRAID_AUTH=off disables authentication (development only)
	KafkaBrokers   []string   // BRAID_KAFKA_BROKERS, comma-separated; default 127.0.0.1:19092
	TopicPrefix    string     // BRAID_KAFKA_TOPIC_PREFIX; default ""
	Partitions     int        // BRAID_KAFKA_PARTITIONS for topics created at start-up; default 6
	RedisURL       string     // BRAID_REDIS_URL; default redis://127.0.0.1:16379/0
	RedisNamespace string     // BRAID_REDIS_NAMESPACE inserted after "braid:"; default ""
	LogLevel       slog.Level // BRAID_LOG_LEVEL debug|info|warn|error; default info
	MaxBody        int64      // BRAID_API_MAX_BODY, request body limit in bytes; default 2 MiB
}

// Load reads the environment, reporting every malformed variable at once.
// It does not check BRAID_API_KEYS beyond reading it: apisvc parses the keys
// and reports what is wrong without echoing them.
func Load() (Config, error) {
	var errs []string
	c := Config{
		Addr:           cmp.Or(os.Getenv("BRAID_API_ADDR"), "127.0.0.1:8080"),
		APIKeys:        os.Getenv("BRAID_API_KEYS"),
		KafkaBrokers:   splitList(cmp.Or(os.Getenv("BRAID_KAFKA_BROKERS"), "127.0.0.1:19092")),
		TopicPrefix:    os.Getenv("BRAID_KAFKA_TOPIC_PREFIX"),
		RedisURL:       cmp.Or(os.Getenv("BRAID_REDIS_URL"), "redis://127.0.0.1:16379/0"),
		RedisNamespace: os.Getenv("BRAID_REDIS_NAMESPACE"),
	}
	switch v := strings.ToLower(os.Getenv("BRAID_AUTH")); v {
	case "", "on":
	case "off":
		c.AuthOff = true
	default:
		errs = append(errs, fmt.Sprintf("BRAID_AUTH=%q: want on or off", v))
	}
	var err error
	if c.Partitions, err = positiveInt("BRAID_KAFKA_PARTITIONS", 6); err != nil {
		errs = append(errs, err.Error())
	}
	maxBody, err := positiveInt("BRAID_API_MAX_BODY", DefaultMaxBody)
	if err != nil {
		errs = append(errs, err.Error())
	}
	c.MaxBody = int64(maxBody)
	if err := c.LogLevel.UnmarshalText([]byte(cmp.Or(os.Getenv("BRAID_LOG_LEVEL"), "info"))); err != nil {
		errs = append(errs, "BRAID_LOG_LEVEL: "+err.Error())
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
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

// positiveInt reads a positive integer variable, or def when it is unset.
func positiveInt(name string, def int) (int, error) {
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
