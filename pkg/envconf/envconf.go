// Package envconf reads BRAID_* settings from the environment for the
// services' internal/config packages: typed getters with defaults that
// collect every malformed variable so a service reports them all at once,
// and the settings every service shares (Kafka, Redis, logging).
package envconf

import (
	"cmp"
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

// Reader reads variables and remembers what was malformed. Not safe for
// concurrent use; a service builds one in Load.
type Reader struct {
	lookup  func(string) (string, bool)
	environ func() []string
	errs    []error
}

// New reads the process environment.
func New() *Reader { return &Reader{lookup: os.LookupEnv, environ: os.Environ} }

// FromMap reads m instead of the environment (tests).
func FromMap(m map[string]string) *Reader {
	return &Reader{
		lookup: func(k string) (string, bool) { v, ok := m[k]; return v, ok },
		environ: func() []string {
			out := make([]string, 0, len(m))
			for k, v := range m {
				out = append(out, k+"="+v)
			}
			return out
		},
	}
}

// Prefixed returns every variable whose name starts with prefix and has
// more after it, keyed by that rest (BRAID_SECRET_TOKEN → TOKEN), with
// values as they are (not trimmed: they may be secrets).
func (r *Reader) Prefixed(prefix string) map[string]string {
	out := map[string]string{}
	for _, kv := range r.environ() {
		k, v, _ := strings.Cut(kv, "=")
		if name, ok := strings.CutPrefix(k, prefix); ok && name != "" {
			out[name] = v
		}
	}
	return out
}

func (r *Reader) get(name string) string {
	v, _ := r.lookup(name)
	return strings.TrimSpace(v)
}

func (r *Reader) bad(name, v, want string) {
	r.errs = append(r.errs, fmt.Errorf("%s=%q: want %s", name, v, want))
}

// String returns name's value, or def when unset or empty.
func (r *Reader) String(name, def string) string { return cmp.Or(r.get(name), def) }

// List returns name's comma-separated values without blanks, or def's.
func (r *Reader) List(name, def string) []string {
	var out []string
	for _, p := range strings.Split(r.String(name, def), ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// PositiveInt returns name's value as an integer > 0, or def.
func (r *Reader) PositiveInt(name string, def int) int {
	v := r.get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		r.bad(name, v, "a positive integer")
		return def
	}
	return n
}

// NonNegativeInt returns name's value as an integer >= 0, or def. It is for
// limits where 0 has a meaning of its own (usually "no limit").
func (r *Reader) NonNegativeInt(name string, def int) int {
	v := r.get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		r.bad(name, v, "a non-negative integer")
		return def
	}
	return n
}

// Duration returns name's value as a positive duration ("6s", "500ms"), or def.
func (r *Reader) Duration(name string, def time.Duration) time.Duration {
	v := r.get(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.bad(name, v, "a positive duration like 6s")
		return def
	}
	return d
}

// Bool returns name's value as a boolean (true/false/1/0/on/off), or def.
func (r *Reader) Bool(name string, def bool) bool {
	switch v := strings.ToLower(r.get(name)); v {
	case "":
		return def
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	default:
		r.bad(name, v, "true or false")
		return def
	}
}

// Parsed returns parse(name's value), or the zero T when name is unset or
// empty. A parse error is recorded, prefixed with the variable and value.
func Parsed[T any](r *Reader, name string, parse func(string) (T, error)) T {
	var zero T
	v := r.get(name)
	if v == "" {
		return zero
	}
	out, err := parse(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s=%q: %w", name, v, err))
		return zero
	}
	return out
}

// LogLevel returns name's value as a slog level (debug, info, warn, error), or info.
func (r *Reader) LogLevel(name string) slog.Level {
	var l slog.Level
	v := r.String(name, "info")
	if err := l.UnmarshalText([]byte(v)); err != nil {
		r.bad(name, v, "debug, info, warn or error")
		return slog.LevelInfo
	}
	return l
}

// Err reports every malformed variable read so far, or nil.
func (r *Reader) Err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return fmt.Errorf("configuration: %w", errors.Join(r.errs...))
}

// Common holds the settings every Braid service reads.
type Common struct {
	KafkaBrokers   []string      // BRAID_KAFKA_BROKERS, comma-separated; default 127.0.0.1:19092
	TopicPrefix    string        // BRAID_KAFKA_TOPIC_PREFIX; default ""
	Partitions     int           // BRAID_KAFKA_PARTITIONS of topics created at start-up; default 6
	SessionTimeout time.Duration // BRAID_KAFKA_SESSION_TIMEOUT of consumer groups; default 3s
	RedisURL       string        // BRAID_REDIS_URL; default redis://127.0.0.1:16379/0
	RedisNamespace string        // BRAID_REDIS_NAMESPACE inserted after "braid:"; default ""
	LogLevel       slog.Level    // BRAID_LOG_LEVEL debug|info|warn|error; default info
	PprofAddr      string        // BRAID_PPROF_ADDR, host:port serving net/http/pprof; default "" (off)
	Kafka          KafkaSecurity // BRAID_KAFKA_TLS*, BRAID_KAFKA_SASL_*; default plaintext, no SASL
	// RedisCAs are the CAs of BRAID_REDIS_TLS_CA_FILE that a rediss://
	// server's certificate is verified against; nil: the system's.
	RedisCAs *x509.CertPool
	// ReplicationFactor is BRAID_KAFKA_REPLICATION_FACTOR of topics created
	// at start-up; default 0: eventbus chooses it from the broker count (3
	// replicas and min.insync.replicas 2 on three or more brokers).
	ReplicationFactor int
	// IndexShards is BRAID_REDIS_INDEX_SHARDS, the shards of the cross-run
	// indexes; default 16 when BRAID_REDIS_URL names a Redis Cluster, else 1.
	IndexShards int
}

// Common reads the shared settings.
func (r *Reader) Common() Common {
	return Common{
		KafkaBrokers:      r.List("BRAID_KAFKA_BROKERS", "127.0.0.1:19092"),
		TopicPrefix:       r.String("BRAID_KAFKA_TOPIC_PREFIX", ""),
		Partitions:        r.PositiveInt("BRAID_KAFKA_PARTITIONS", 6),
		SessionTimeout:    r.Duration("BRAID_KAFKA_SESSION_TIMEOUT", eventbus.DefaultSessionTimeout),
		RedisURL:          r.String("BRAID_REDIS_URL", "redis://127.0.0.1:16379/0"),
		RedisNamespace:    r.String("BRAID_REDIS_NAMESPACE", ""),
		LogLevel:          r.LogLevel("BRAID_LOG_LEVEL"),
		PprofAddr:         r.String("BRAID_PPROF_ADDR", ""),
		Kafka:             r.kafkaSecurity(),
		RedisCAs:          r.caFile("BRAID_REDIS_TLS_CA_FILE"),
		ReplicationFactor: r.PositiveInt("BRAID_KAFKA_REPLICATION_FACTOR", 0),
		IndexShards:       r.indexShards(),
	}
}

// indexShards reads BRAID_REDIS_INDEX_SHARDS (1..statestore.MaxIndexShards),
// defaulting by the kind of Redis BRAID_REDIS_URL names.
func (r *Reader) indexShards() int {
	def := 1
	if statestore.IsClusterURL(r.String("BRAID_REDIS_URL", "")) {
		def = statestore.DefaultClusterIndexShards
	}
	n := r.PositiveInt("BRAID_REDIS_INDEX_SHARDS", def)
	if n > statestore.MaxIndexShards {
		r.bad("BRAID_REDIS_INDEX_SHARDS", strconv.Itoa(n), fmt.Sprintf("at most %d", statestore.MaxIndexShards))
	}
	return n
}

// Keys are the Redis key names of c's namespace and index layout.
func (c Common) Keys() statestore.Keys {
	return statestore.Keys{Namespace: c.RedisNamespace, Shards: c.IndexShards}
}

// Bus returns the eventbus settings of c for a process named clientID.
func (c Common) Bus(clientID string) eventbus.Config {
	return eventbus.Config{Brokers: c.KafkaBrokers, ClientID: clientID, Partitions: c.Partitions,
		ReplicationFactor: c.ReplicationFactor, TopicPrefix: c.TopicPrefix, SessionTimeout: c.SessionTimeout,
		TLS: c.Kafka.TLS, SASL: c.Kafka.SASL}
}
