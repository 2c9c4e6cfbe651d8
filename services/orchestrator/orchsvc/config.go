// Package orchsvc is the orchestrator service's shell around the pure
// decision core: it consumes workflow.start, workflow.control and
// task.complete in batches, holds a per-run lock with a fencing token,
// applies events to the core, persists the effects in one pipelined round
// trip, then publishes dispatches and run events and commits offsets.
package orchsvc

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/confcheck"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/metrics"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/redis/go-redis/v9"
)

// GroupID is the orchestrators' consumer group.
const GroupID = "braid-orchestrator"

// DefaultReconcileRate is Config.ReconcileRate's default: runs asked to
// reconcile per second. At 5,000 active runs or fewer a pass still takes
// at most the default ReconcileEvery.
const DefaultReconcileRate = 1000

// DefaultRunRetention is Config.RunRetention's default: ended runs are
// kept a week.
const DefaultRunRetention = 7 * 24 * time.Hour

// ParseRunRetention reads a retention setting (BRAID_RUN_RETENTION): a Go
// duration of at least a second ("36h", "90m"), whole days ("7d"), or "0"
// or "off" to keep every run (-1). Empty is DefaultRunRetention.
func ParseRunRetention(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "":
		return DefaultRunRetention, nil
	case "0", "off":
		return -1, nil
	}
	d, err := time.ParseDuration(v)
	if days, ok := strings.CutSuffix(v, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		if err == nil && (n < 1 || n > 36500) {
			err = strconv.ErrRange
		}
		d = time.Duration(n) * 24 * time.Hour
	}
	if err != nil || d < time.Second {
		return 0, fmt.Errorf("%q: want a duration of at least 1s like \"36h\", whole days like \"7d\", or \"0\" to keep every run", v)
	}
	return d, nil
}

// Config configures an orchestrator.
type Config struct {
	// ID names this orchestrator in logs and lock metadata; default hostname-pid.
	ID string
	// StableID says ID names this orchestrator across restarts and no other
	// live orchestrator uses it (BRAID_ORCHESTRATOR_ID set, e.g. to a
	// StatefulSet pod name). A restarted orchestrator then takes over at once
	// the run locks held under ID and the consumer-group memberships of its
	// killed predecessor (eventbus.Config.InstanceID), instead of waiting out
	// the lock TTL and the group session. Requires a non-empty ID.
	StableID bool
	// Bus is the Kafka configuration. A zero Bus.FetchBuffer becomes
	// BatchMax: the consumer prefetches a whole batch while one is handled
	// (eventbus.Config.PrefetchBytes bounds its bytes).
	Bus eventbus.Config
	// Redis is the state store client (required).
	Redis redis.UniversalClient
	// Keys builds Redis keys (namespace for tests).
	Keys statestore.Keys
	// Group is the consumer group; default GroupID.
	Group string
	// BatchMax bounds the messages handled in one batch; default 1000.
	BatchMax int
	// LockTTL is the run lock's time to live; it is refreshed every LockTTL/3
	// while held. Default 4s: a killed orchestrator's runs move on within 5 s.
	LockTTL time.Duration
	// IdleRelease releases a run's lock after this long without events (a
	// run's lock is also released once it ends); default 3s. Longer keeps
	// busy runs from paying a new acquisition and reload between events;
	// shorter hands runs over sooner after a rebalance.
	IdleRelease time.Duration
	// LockWait bounds the wait for a run lock held by another orchestrator
	// (during a rebalance); default 20s.
	LockWait time.Duration
	// DrainTimeout is how long, once Run's context ends, the batch in hand
	// may still try to publish its messages before it is given up (and its
	// offsets left uncommitted); default 5s.
	DrainTimeout time.Duration
	// TimerPoll is how often due durable timers are looked for; default 100ms.
	TimerPoll time.Duration
	// ReconcileEvery is how often every busy run — one with attempts
	// queued or running, or waiting for a concurrency slot (busy.go) — is
	// re-examined (and once at start-up); default 5s. A worker that
	// starts, or whose liveness lapses, triggers a pass at once.
	ReconcileEvery time.Duration
	// ReconcileAllEvery is how often every active run is re-examined,
	// those that wait on approvals and timers included (and once at
	// start-up); default 12 × ReconcileEvery (1m).
	ReconcileAllEvery time.Duration
	// ReconcileRate bounds the busy runs a reconcile pass asks about per
	// second (each RECONCILE control loads its run); default 1000. A pass
	// over more than ReconcileEvery × ReconcileRate runs takes longer than
	// ReconcileEvery, and the next begins when it ends. The pass over
	// every active run goes at a quarter of it.
	ReconcileRate int
	// RunRetention is how long an ended run is kept after it ended: the
	// maintenance leader then deletes it with every key of its own and its
	// index entries (prune.go). Zero is DefaultRunRetention; negative keeps
	// every run for ever.
	RunRetention time.Duration
	// LivenessCheck is how often the maintenance leader looks for
	// registered workers whose liveness key lapsed (they died without
	// stopping); finding one triggers a reconcile pass. Default 1s.
	LivenessCheck time.Duration
	// MaxLost is how many times one attempt may be lost with its worker
	// (and dispatched again without consuming an attempt) before its node
	// fails; default core.DefaultMaxLost (3).
	MaxLost int
	// LeaderTTL is the time to live of the leases of the cluster-wide duties
	// (maintenance, the scheduler); their holders renew them every poll, so a
	// dead holder is replaced within LeaderTTL. Default 3s.
	LeaderTTL time.Duration
	// SchedulePoll is how often the scheduler looks for due schedules;
	// default 200ms.
	SchedulePoll time.Duration
	// Clock tells the scheduler the time; default time.Now.
	Clock func() time.Time
	// MetricsAddr is where GET /metrics is served (Prometheus text); empty
	// serves none.
	MetricsAddr string
	// Metrics is where the orchestrator registers its collectors and what
	// its /metrics serves; default (zero) a fresh registry of its own.
	Metrics metrics.Registry
	// Logger receives structured logs; default slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	host, _ := os.Hostname()
	c.ID = cmp.Or(c.ID, fmt.Sprintf("%s-%d", host, os.Getpid()))
	if c.StableID {
		c.Bus.InstanceID = c.ID
	}
	c.Group = cmp.Or(c.Group, GroupID)
	c.BatchMax = cmp.Or(c.BatchMax, 1000)
	c.Bus.FetchBuffer = cmp.Or(c.Bus.FetchBuffer, c.BatchMax)
	c.LockTTL = cmp.Or(c.LockTTL, 4*time.Second)
	c.IdleRelease = cmp.Or(c.IdleRelease, 3*time.Second)
	c.LockWait = cmp.Or(c.LockWait, 20*time.Second)
	c.DrainTimeout = cmp.Or(c.DrainTimeout, 5*time.Second)
	c.TimerPoll = cmp.Or(c.TimerPoll, 100*time.Millisecond)
	c.ReconcileEvery = cmp.Or(c.ReconcileEvery, 5*time.Second)
	c.ReconcileAllEvery = cmp.Or(c.ReconcileAllEvery, 12*c.ReconcileEvery)
	c.ReconcileRate = cmp.Or(c.ReconcileRate, DefaultReconcileRate)
	c.RunRetention = cmp.Or(c.RunRetention, DefaultRunRetention)
	c.LivenessCheck = cmp.Or(c.LivenessCheck, time.Second)
	c.MaxLost = cmp.Or(c.MaxLost, core.DefaultMaxLost)
	c.LeaderTTL = cmp.Or(c.LeaderTTL, 3*time.Second)
	c.SchedulePoll = cmp.Or(c.SchedulePoll, 200*time.Millisecond)
	if c.Clock == nil {
		c.Clock = time.Now
	}
	c.Metrics = c.Metrics.OrNew()
	c.Logger = cmp.Or(c.Logger, slog.Default())
	c.Bus.Logger = cmp.Or(c.Bus.Logger, c.Logger)
	return c
}

// validate reports every problem of a defaulted Config at once.
func (c Config) validate() error {
	errs := []error{confcheck.Required("Redis client", c.Redis == nil), confcheck.Required("Bus.Brokers", len(c.Bus.Brokers) == 0)}
	if c.LockTTL < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("LockTTL %s is below 100ms", c.LockTTL))
	}
	if c.ReconcileRate < 1 {
		errs = append(errs, fmt.Errorf("ReconcileRate %d must be at least 1 run a second", c.ReconcileRate))
	}
	if c.LeaderTTL < 3*max(c.TimerPoll, c.SchedulePoll) {
		errs = append(errs, fmt.Errorf("LeaderTTL %s must be at least three polls (TimerPoll %s, SchedulePoll %s)", c.LeaderTTL, c.TimerPoll, c.SchedulePoll))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("orchestrator config: %w", err)
	}
	return nil
}
