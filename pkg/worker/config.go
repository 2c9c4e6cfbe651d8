package worker

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/braidhq/braid/pkg/confcheck"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// DefaultGroup is the consumer group on task.dispatch of the workers that
// offer exactly the built-in handlers (BuiltinHandlers): the stock worker
// and braid dev's. Workers offering another set join GroupFor's group of
// that set.
const DefaultGroup = "braid-workers"

// BuiltinHandlers are the names of pkg/handler's built-in handlers, sorted
// (pkg/handler's tests check they agree).
var BuiltinHandlers = []string{"http", "llm", "noop", "shell", "simulate", "transform"}

// GroupFor is the consumer group of the workers offering exactly handlers
// (in any order): DefaultGroup for BuiltinHandlers, else "braid-workers."
// and 16 hex digits of a hash of the sorted names. Workers offering the
// same set share a group and split its partitions; workers offering
// different sets are in different groups, so each pool sees every dispatch
// and claims those of its own handlers (a dispatch's claim makes sure one
// worker runs it, whichever pools offer its handler). A pool that shared a
// group with another set would be handed dispatches it cannot run, and the
// worker that can would never see them.
func GroupFor(handlers []string) string {
	names := slices.Clone(handlers)
	slices.Sort(names)
	names = slices.Compact(names)
	if slices.Equal(names, BuiltinHandlers) {
		return DefaultGroup
	}
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%d:%s", len(n), n) // length-prefixed: no two sets hash the same bytes
	}
	return DefaultGroup + "." + hex.EncodeToString(h.Sum(nil)[:8])
}

// Defaults applied by New to zero Config fields.
const (
	DefaultConcurrency       = 4
	DefaultHeartbeatInterval = 5 * time.Second
	DefaultHeartbeatTimeout  = 30 * time.Second // claim TTL when a dispatch sets none
	DefaultStartNotice       = 200 * time.Millisecond
	DefaultMaxInlineOutput   = 256 << 10 // 256 KiB
	DefaultLogLinesCap       = 1000
	DefaultLogFlushInterval  = time.Second
	DefaultDrainTimeout      = 20 * time.Second
	DefaultLivenessTimeout   = 5 * time.Second
	DefaultAheadWindow       = 5 * time.Second
)

// MaxLogLineBytes caps the text of one attempt log line; longer lines are cut.
const MaxLogLineBytes = 4 << 10

// Config configures a Worker. Zero fields take the defaults named next to them.
type Config struct {
	// ID names this worker in claims, results, logs and the registry.
	// Default "<hostname>-<pid>-<random hex>".
	ID string
	// Bus is the Kafka configuration (brokers, client id, topic prefix). A
	// zero Bus.FetchBuffer becomes Concurrency, so that a busy worker holds
	// few prefetched dispatches in memory.
	Bus eventbus.Config
	// Redis is the state store client (required). Every command is bounded by a
	// context deadline, so build it with ContextTimeoutEnabled (statestore.NewClient does).
	Redis redis.UniversalClient
	// Keys builds Redis keys; its Namespace isolates tests.
	Keys statestore.Keys
	// Handlers maps handler names (TaskDispatch.handler) to handlers (required, non-empty).
	Handlers map[string]Handler
	// Secrets resolves the << secret.NAME >> references of a task's config
	// (nil: a task that references one fails permanently, saying so).
	Secrets Secrets
	// Concurrency is the most attempts this worker executes at once; it fetches
	// a dispatch only when one of its Concurrency executors is free.
	// Default DefaultConcurrency (4).
	Concurrency int
	// Group is the Kafka consumer group. Default GroupFor(the names of
	// Handlers): DefaultGroup ("braid-workers") for the built-in set. Set
	// it only to split workers of one handler set into groups of their own
	// (each group then sees, and races to claim, every dispatch); never give
	// workers of different handler sets one group.
	Group string
	// HeartbeatInterval is how often the registry entry is rewritten and,
	// at most, how long the claim of an in-flight attempt goes unrefreshed
	// (and unchecked for cancellation): an attempt whose heartbeat timeout
	// (the claim TTL, default 30s) is under three intervals is refreshed
	// every third of its timeout instead. Default 5s.
	HeartbeatInterval time.Duration
	// StartNotice: an attempt still running after this long gets a RUNNING
	// TaskResult, so that fast attempts cost a single message. Default 200ms.
	StartNotice time.Duration
	// MaxInlineOutput is the largest output, in bytes of JSON, carried inside a
	// TaskResult; a larger one is stored under Keys.Blob and referenced by
	// output_ref. Default DefaultMaxInlineOutput (256 KiB).
	MaxInlineOutput int
	// LogLinesCap is the most log lines kept per attempt (older lines are
	// trimmed). Each line is cut at MaxLogLineBytes. Default 1000.
	LogLinesCap int
	// LogFlushInterval is how often new log lines of running attempts are
	// appended to Redis (they are always flushed before the result is
	// published). Default 1s.
	LogFlushInterval time.Duration
	// LivenessTimeout is how long after its last liveness renewal a worker
	// counts as dead: its attempts are then lost and dispatched again
	// elsewhere, without consuming a retry. The worker renews it four times
	// per timeout, independently of its tasks, so only a dead, frozen or
	// partitioned process misses it. Shorter detects a killed worker sooner;
	// longer tolerates longer stalls (a stalled worker that comes back finds
	// its attempts taken over and stops them). Default 5s.
	LivenessTimeout time.Duration
	// DrainTimeout bounds, on shutdown, how long in-flight attempts may run
	// before they are cancelled and handed back. Default 20s.
	DrainTimeout time.Duration
	// AheadWindow is how long a dispatch that arrived ahead of the write
	// queueing its attempt (the orchestrator publishes the two side by
	// side; statestore.ClaimAhead) is claimed again before it is dropped
	// as belonging to a write that failed. Meanwhile the worker claims it
	// again after 200 µs, then at doubling pauses of at most 100 ms, and
	// fetches nothing else (the batch's other attempts run). Default 5s.
	AheadWindow time.Duration
	// Logger receives structured logs. Default slog.Default().
	Logger *slog.Logger
	// Metrics, when set, is where the attempt metrics (outcomes, queue
	// wait, duration by handler) are registered. Default nil: none served.
	Metrics prometheus.Registerer
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	c.ID = cmp.Or(c.ID, defaultID())
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	c.Bus.FetchBuffer = cmp.Or(c.Bus.FetchBuffer, max(c.Concurrency, 1))
	if c.Group == "" {
		c.Group = GroupFor(slices.Collect(maps.Keys(c.Handlers)))
	}
	c.HeartbeatInterval = cmp.Or(c.HeartbeatInterval, DefaultHeartbeatInterval)
	c.StartNotice = cmp.Or(c.StartNotice, DefaultStartNotice)
	c.MaxInlineOutput = cmp.Or(c.MaxInlineOutput, DefaultMaxInlineOutput)
	c.LogLinesCap = cmp.Or(c.LogLinesCap, DefaultLogLinesCap)
	c.LogFlushInterval = cmp.Or(c.LogFlushInterval, DefaultLogFlushInterval)
	c.DrainTimeout = cmp.Or(c.DrainTimeout, DefaultDrainTimeout)
	c.LivenessTimeout = cmp.Or(c.LivenessTimeout, DefaultLivenessTimeout)
	c.AheadWindow = cmp.Or(c.AheadWindow, DefaultAheadWindow)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	c.Bus.Logger = cmp.Or(c.Bus.Logger, c.Logger)
	return c
}

// maxIDBytes bounds a worker id (it is in every claim, result and log line).
const maxIDBytes = 200

// validate reports every problem of a defaulted Config at once.
func (c Config) validate() error {
	errs := []error{confcheck.Required("Redis client", c.Redis == nil), confcheck.Required("Bus.Brokers", len(c.Bus.Brokers) == 0)}
	if len(c.Handlers) == 0 {
		//lint:ignore ST1005 config errors start with the Config field's name (Handlers), as confcheck.Required's do
		errs = append(errs, errors.New("Handlers is empty"))
	}
	for name, h := range c.Handlers {
		if name == "" || h == nil {
			errs = append(errs, fmt.Errorf("handler %q: empty name or nil handler", name))
		}
	}
	if len(c.ID) > maxIDBytes || !utf8.ValidString(c.ID) || strings.ContainsFunc(c.ID, unicode.IsControl) {
		// It goes into every result: protobuf refuses a string that is not UTF-8.
		errs = append(errs, fmt.Errorf("ID %q: want at most %d bytes of UTF-8 without control characters", c.ID, maxIDBytes))
	}
	errs = append(errs, confcheck.Positive("Concurrency", c.Concurrency), confcheck.Positive("MaxInlineOutput", c.MaxInlineOutput),
		confcheck.Positive("LogLinesCap", c.LogLinesCap), confcheck.Positive("HeartbeatInterval", c.HeartbeatInterval),
		confcheck.Positive("StartNotice", c.StartNotice), confcheck.Positive("LogFlushInterval", c.LogFlushInterval),
		confcheck.Positive("DrainTimeout", c.DrainTimeout), confcheck.Positive("LivenessTimeout", c.LivenessTimeout),
		confcheck.Positive("AheadWindow", c.AheadWindow))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("worker config: %w", err)
	}
	return nil
}

// newIncarnation is a random token naming one start of a worker process.
func newIncarnation() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}

// defaultID is "<hostname>-<pid>-<8 random hex digits>".
func defaultID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "worker"
	}
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}
