package eventbus

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
)

// Defaults applied by Config.withDefaults to zero fields.
const (
	DefaultClientID          = "braid"
	DefaultPartitions        = 6
	DefaultSessionTimeout    = 3 * time.Second
	DefaultHeartbeatInterval = 500 * time.Millisecond
	DefaultRebalanceTimeout  = 5 * time.Second
	DefaultJoinGroupBackoff  = 250 * time.Millisecond
	DefaultMaxWait           = 250 * time.Millisecond
	DefaultAdminTimeout      = 10 * time.Second
	DefaultPublishTimeout    = 30 * time.Second
	DefaultFetchBuffer       = 64
	DefaultPrefetchBytes     = 16 << 20
)

// kafkaQueueMax bounds kafka-go's own queue of fetched records (its
// QueueCapacity, kafka-go's default): a consumer with a large FetchBuffer
// (the orchestrator's batch) gathers its records in its own buffer, which
// PrefetchBytes bounds, not in kafka-go's, which counts records only.
const kafkaQueueMax = 100

// maxMessageBytes is the largest record (key + value + headers) a Producer
// sends: Kafka's default message.max.bytes is 1 MiB plus overhead, and SPEC
// §6 moves outputs over 256 KiB to Redis.
const maxMessageBytes = 1 << 20

// topicChars is what Kafka accepts in a topic name.
var topicChars = regexp.MustCompile(`^[a-zA-Z0-9._-]*$`)

// Config configures producers, consumers and EnsureTopics. The zero value of
// every field but Brokers means "use the default".
type Config struct {
	// Brokers lists bootstrap brokers as host:port. Required.
	Brokers []string
	// ClientID names this process to the brokers (logs, quotas). Default "braid".
	ClientID string
	// InstanceID is a name of this process that stays the same when it
	// restarts and that no other live process uses (a StatefulSet pod name,
	// a configured service id), like Kafka's group.instance.id. When set, a
	// Consumer announces it in its client id and, before joining its group,
	// evicts the members left there by its own previous incarnation, so a
	// killed and restarted process gets its partitions back at once instead
	// of after SessionTimeout. Give each Consumer of one group its own
	// InstanceID: a second Consumer joining a group under the same one
	// evicts the first. Only [a-zA-Z0-9._-]. Default "": none.
	InstanceID string
	// Partitions is the partition count of topics created by EnsureTopics.
	// Existing topics are left as they are. Default 6.
	Partitions int
	// ReplicationFactor of topics created by EnsureTopics. Existing topics
	// are left as they are. Default 0: chosen from the number of brokers
	// the cluster's metadata lists (see AutoReplicationFactor): 3 replicas
	// and min.insync.replicas=2 on 3 or more brokers, 2 and 1 on two, 1 on
	// one. An explicit value is used as given (the brokers refuse one above
	// their count) and leaves min.insync.replicas to the brokers' default.
	ReplicationFactor int
	// SessionTimeout is how long a consumer may go without a heartbeat before
	// the group coordinator evicts it and reassigns its partitions: the
	// longest a dead member's partitions wait. Brokers refuse a session
	// outside their group.min/max.session.timeout.ms (stock Kafka and kfake:
	// 6 s minimum; Braid starts its kfake brokers with 1 s), so a Consumer
	// moves it into the brokers' range and logs that. Default 3 s.
	SessionTimeout time.Duration
	// HeartbeatInterval is how often a consumer heartbeats, and so how soon
	// it learns that a rebalance started. Must be below SessionTimeout.
	// Default 500 ms.
	HeartbeatInterval time.Duration
	// RebalanceTimeout is how long the coordinator waits for members to
	// rejoin during a rebalance, and how long a member waits for the group
	// to settle. Default 5 s.
	RebalanceTimeout time.Duration
	// JoinGroupBackoff is the pause before retrying a failed group join, and
	// before a Consumer retries after a fetch error. Default 250 ms.
	JoinGroupBackoff time.Duration
	// MaxWait is how long the broker holds a fetch open when no records are
	// ready (long poll); it also bounds how long Close waits for a fetch in
	// flight. Default 250 ms.
	MaxWait time.Duration
	// AdminTimeout bounds each broker request of EnsureTopics and its wait
	// for the new topics to show in metadata, and each produce request of
	// Publish. Default 10 s.
	AdminTimeout time.Duration
	// PublishTimeout bounds how long one Publish keeps re-sending records
	// whose partition leader moved, is being elected or cannot be reached
	// (the caller's ctx may end it sooner). It should outlast a real
	// cluster's failover: KRaft notices a dead broker after
	// broker.session.timeout.ms (9 s) and then elects new leaders.
	// Default 30 s.
	PublishTimeout time.Duration
	// FetchBuffer is how many messages a Consumer prefetches ahead of Fetch
	// in its own buffer (kafka-go's queue holds up to min(FetchBuffer, 100)
	// more), and so the most one Fetch returns without waiting: a consumer
	// that handles records in batches wants it as large as its batch.
	// Default 64.
	FetchBuffer int
	// PrefetchBytes bounds the bytes (keys, values, headers) of the records
	// in a Consumer's own buffer: a pump waits for a Fetch rather than exceed
	// it, except for a record arriving at an empty buffer. Default 16 MiB.
	PrefetchBytes int64
	// Logger receives kafka-go's error log lines (failed dials, retries,
	// group errors) at level Warn, and its informational lines (group
	// joins, assignments, generation ends) at level Debug. Default:
	// discarded.
	Logger *slog.Logger
	// TopicPrefix is prepended to every topic name on the wire, so tests can
	// share one broker. Only [a-zA-Z0-9._-]. Default "".
	TopicPrefix string
	// TLS, when set, encrypts every connection to the brokers (consumer,
	// producer, admin). Default nil: plaintext.
	TLS *tls.Config
	// SASL, when set, authenticates every connection (kafka-go's
	// sasl/plain or sasl/scram mechanisms). Default nil: none.
	SASL sasl.Mechanism
	// Dial, when set, opens every connection to the brokers instead of a
	// TCP dial (braid dev's services reach its in-process broker through
	// memory). Default nil: TCP.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Observer, when set, is told the consumer lag of what Fetch returns
	// and the dead letters Publish wrote (metrics). Default nil: none.
	Observer Observer
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	c.ClientID = cmp.Or(c.ClientID, DefaultClientID)
	c.Partitions = cmp.Or(c.Partitions, DefaultPartitions)
	c.SessionTimeout = cmp.Or(c.SessionTimeout, DefaultSessionTimeout)
	c.HeartbeatInterval = cmp.Or(c.HeartbeatInterval, DefaultHeartbeatInterval)
	c.RebalanceTimeout = cmp.Or(c.RebalanceTimeout, DefaultRebalanceTimeout)
	c.JoinGroupBackoff = cmp.Or(c.JoinGroupBackoff, DefaultJoinGroupBackoff)
	c.MaxWait = cmp.Or(c.MaxWait, DefaultMaxWait)
	c.AdminTimeout = cmp.Or(c.AdminTimeout, DefaultAdminTimeout)
	c.PublishTimeout = cmp.Or(c.PublishTimeout, DefaultPublishTimeout)
	c.FetchBuffer = cmp.Or(c.FetchBuffer, DefaultFetchBuffer)
	c.PrefetchBytes = cmp.Or(c.PrefetchBytes, DefaultPrefetchBytes)
	return c
}

// validate reports every invalid field of a defaulted config.
func (c Config) validate() error {
	var errs []error
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("no brokers"))
	}
	for i, b := range c.Brokers {
		if b == "" {
			errs = append(errs, fmt.Errorf("broker %d is empty", i))
		}
	}
	for _, f := range []struct {
		name string
		v    any
		neg  bool
	}{
		{"partitions", c.Partitions, c.Partitions < 0},
		{"replication factor", c.ReplicationFactor, c.ReplicationFactor < 0},
		{"fetch buffer", c.FetchBuffer, c.FetchBuffer < 0},
		{"prefetch bytes", c.PrefetchBytes, c.PrefetchBytes < 0},
		{"session timeout", c.SessionTimeout, c.SessionTimeout < 0},
		{"heartbeat interval", c.HeartbeatInterval, c.HeartbeatInterval < 0},
		{"rebalance timeout", c.RebalanceTimeout, c.RebalanceTimeout < 0},
		{"join group backoff", c.JoinGroupBackoff, c.JoinGroupBackoff < 0},
		{"max wait", c.MaxWait, c.MaxWait < 0},
		{"admin timeout", c.AdminTimeout, c.AdminTimeout < 0},
		{"publish timeout", c.PublishTimeout, c.PublishTimeout < 0},
	} {
		if f.neg {
			errs = append(errs, fmt.Errorf("%s %v is negative", f.name, f.v))
		}
	}
	if c.HeartbeatInterval >= c.SessionTimeout {
		errs = append(errs, fmt.Errorf("heartbeat interval %s not below session timeout %s", c.HeartbeatInterval, c.SessionTimeout))
	}
	if !topicChars.MatchString(c.InstanceID) {
		errs = append(errs, fmt.Errorf("instance id %q has characters outside [a-zA-Z0-9._-]", c.InstanceID))
	}
	if !topicChars.MatchString(c.TopicPrefix) {
		errs = append(errs, fmt.Errorf("topic prefix %q has characters outside [a-zA-Z0-9._-]", c.TopicPrefix))
	}
	return errors.Join(errs...)
}

// resolve defaults and validates c, naming op in the error.
func (c Config) resolve(op string) (Config, error) {
	c = c.withDefaults()
	if err := c.validate(); err != nil {
		return c, fmt.Errorf("%s: invalid eventbus config: %w", op, err)
	}
	return c, nil
}

// errorLogger adapts Logger at level Warn for kafka-go's error lines,
// except routine ones (Debug); nil when Logger is nil.
func (c Config) errorLogger() kafka.Logger {
	if c.Logger == nil {
		return nil
	}
	l := c.Logger.With(logkey.Component, "kafka-go")
	return kafka.LoggerFunc(func(format string, args ...any) {
		if routine(args) {
			if l.Enabled(context.Background(), slog.LevelDebug) {
				l.Debug(fmt.Sprintf(format, args...))
			}
			return
		}
		l.Warn(fmt.Sprintf(format, args...))
	})
}

// routine reports whether a kafka-go error line is about an error that
// is part of normal operation, logged at Debug: REBALANCE_IN_PROGRESS,
// which a group member meets whenever another joins or leaves (a scale-up,
// a stop) and answers by joining again.
func routine(args []any) bool {
	for _, a := range args {
		if err, ok := a.(error); ok && errors.Is(err, kafka.RebalanceInProgress) {
			return true
		}
	}
	return false
}

// infoLogger adapts Logger at level Debug for kafka-go's informational
// lines, except its idle long-poll line (one per partition every MaxWait);
// nil when Logger is nil. Lines are formatted only when Debug is on.
func (c Config) infoLogger() kafka.Logger {
	if c.Logger == nil {
		return nil
	}
	l := c.Logger.With(logkey.Component, "kafka-go")
	return kafka.LoggerFunc(func(format string, args ...any) {
		if !strings.HasPrefix(format, "no messages received") && l.Enabled(context.Background(), slog.LevelDebug) {
			l.Debug(fmt.Sprintf(format, args...))
		}
	})
}

// topic returns the wire name of the logical topic name.
func (c Config) topic(name string) string { return c.TopicPrefix + name }
