package eventbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/segmentio/kafka-go"
)

// Consumer reads topics as a member of a consumer group.
//
// Concurrency: call Fetch from one goroutine at a time (concurrent calls
// would split the records between callers in no useful order). Commit may be
// called from any goroutine, also while Fetch blocks. Close may be called at
// any time from any goroutine; a blocked Fetch then returns ErrClosed.
//
// Session: the group session (how long a member that died keeps its
// partitions) is cfg.SessionTimeout, moved into the brokers'
// group.min/max.session.timeout.ms range when they do not accept it.
//
// Commit: nothing is committed unless Commit is called; records not
// committed are delivered again to whichever member owns their partition
// next (after a Close, a crash, or a rebalance). Delivery is at-least-once.
//
// Close: always Close a Consumer. It leaves the group at once, so its
// partitions move to the other members without waiting for SessionTimeout.
//
// Failover: kafka-go's reader follows a partition whose leader moved (it
// reconnects to the leader the metadata names, from the offset it had
// reached) and, when the group's coordinator moves or its broker dies,
// rejoins through the new one. A Commit sent meanwhile fails (Not
// Coordinator, a closed connection); committed offsets are kept by the
// cluster, and what that Commit did not cover is delivered again unless a
// later Commit of the partition covers it.
type Consumer struct {
	prefetch
	group string
	r     *kafka.Reader

	cancel   context.CancelFunc
	pumpDone chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// NewConsumer checks that topics (logical names) exist, within ctx and
// cfg.AdminTimeout, then joins group on them and starts prefetching; a new
// group starts at the earliest offset. Joining completes in the background,
// and Fetch blocks until records arrive. The check matters: a kafka-go group
// member whose topic is missing when it joins gets no partitions and stays
// idle without an error, even after the topic is created (its partition
// watcher instead rejoins in a tight loop), so create topics first with
// EnsureTopics.
//
// Reader settings: GroupID + GroupTopics, the range balancer over sorted
// partitions (alignedRange), StartOffset FirstOffset (a live view that
// starts at the end is a Tail), CommitInterval 0 (Commit is synchronous),
// MinBytes 1 (a fetch returns as soon as one record is there), the group
// timeouts and MaxWait of cfg, and QueueCapacity min(cfg.FetchBuffer, kafkaQueueMax);
// readerDialer (a cancelled partition reader closes its connection, so a
// rebalance does not wait out a fetch).
//
// ctx bounds the start-up calls to the brokers only: the consumer runs until
// Close.
func NewConsumer(ctx context.Context, cfg Config, group string, topics ...string) (*Consumer, error) {
	cfg, err := cfg.resolve("new consumer group=" + group)
	if err != nil {
		return nil, err
	}
	if group == "" || len(topics) == 0 {
		return nil, fmt.Errorf("new consumer group=%q topics=%v: group and topics are required", group, topics)
	}
	wire := make([]string, len(topics))
	for i, t := range topics {
		wire[i] = cfg.topic(t)
	}
	if err := requireTopics(ctx, cfg, wire); err != nil {
		return nil, fmt.Errorf("new consumer group=%s: %w", group, err)
	}
	cfg, note := fitSession(ctx, cfg)
	if note != "" && cfg.Logger != nil {
		cfg.Logger.Warn("consumer group session adjusted to the brokers' limits", logkey.Group, group, logkey.Detail, note)
	}
	if n, err := evictPredecessors(ctx, cfg, group); cfg.Logger != nil && (err != nil || n > 0) {
		// Best effort: without it the old members expire after SessionTimeout.
		cfg.Logger.Info("evicted members of this instance's previous incarnation", logkey.Group, group, logkey.GroupInstance, cfg.InstanceID, logkey.Evicted, n, logkey.Err, err)
	}
	r := kafka.NewReader(readerConfig(cfg, group, wire))
	// The pump outlives ctx, which bounds start-up only: Close ends it.
	pumpCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &Consumer{prefetch: newPrefetch(cfg), group: group, r: r, cancel: cancel, pumpDone: make(chan struct{})}
	go func() {
		defer close(c.pumpDone)
		c.pump(pumpCtx, r)
	}()
	return c, nil
}

// partitionWatch is how often each group member reads its topics'
// partition counts: when one grew (an operator added partitions), the
// member ends its generation and the group rebalances over every
// partition. Without the watch, added partitions were consumed by nobody
// until a member happened to join or leave.
const partitionWatch = 5 * time.Second

// readerConfig returns the kafka-go reader settings for cfg.
func readerConfig(cfg Config, group string, topics []string) kafka.ReaderConfig {
	return kafka.ReaderConfig{
		Brokers:                cfg.Brokers,
		GroupID:                group,
		GroupTopics:            topics,
		Dialer:                 readerDialer(cfg),
		StartOffset:            kafka.FirstOffset,
		CommitInterval:         0,
		MinBytes:               1,
		MaxBytes:               maxMessageBytes,
		MaxWait:                cfg.MaxWait,
		QueueCapacity:          min(cfg.FetchBuffer, kafkaQueueMax),
		SessionTimeout:         cfg.SessionTimeout,
		HeartbeatInterval:      cfg.HeartbeatInterval,
		RebalanceTimeout:       cfg.RebalanceTimeout,
		JoinGroupBackoff:       cfg.JoinGroupBackoff,
		GroupBalancers:         []kafka.GroupBalancer{alignedRange{}},
		WatchPartitionChanges:  true,
		PartitionWatchInterval: partitionWatch,
		ErrorLogger:            cfg.errorLogger(),
		Logger:                 cfg.infoLogger(),
	}
}

// Commit marks msgs (returned by Fetch) as done: for each partition the
// group's offset moves past the highest offset among msgs, which also
// commits every earlier record of that partition. It returns after the
// coordinator acknowledged the commit. Commit after Close returns ErrClosed.
//
// Commit a record only after it and every earlier record of its partition
// returned by Fetch are handled. kafka-go also commits records of partitions
// reassigned since they were fetched (kafka-go #1308; kfake accepts it), which
// under that rule can only move the offset back (more redelivery), or past
// records this member already handled.
func (c *Consumer) Commit(ctx context.Context, msgs ...Message) error {
	if len(msgs) == 0 {
		return nil
	}
	raws := make([]kafka.Message, len(msgs))
	for i, m := range msgs {
		if m.raw.Topic == "" {
			return fmt.Errorf("commit group=%s topic=%s offset=%d: message was not fetched by a consumer", c.group, m.Topic, m.Offset)
		}
		raws[i] = m.raw
	}
	err := c.closedErr()
	if err == nil {
		err = c.r.CommitMessages(ctx, raws...)
	}
	if errors.Is(err, io.ErrClosedPipe) {
		err = ErrClosed
	}
	if err != nil {
		last := msgs[len(msgs)-1]
		return fmt.Errorf("commit group=%s %d messages, last topic=%s partition=%d offset=%d: %w",
			c.group, len(msgs), last.Topic, last.Partition, last.Offset, err)
	}
	return nil
}

// Close stops prefetching, leaves the group (so its partitions are
// reassigned at once, not after SessionTimeout) and closes connections. It
// does not commit; prefetched records not committed are delivered again to
// the next owner. Fetch blocked in another goroutine returns ErrClosed. Close
// is safe to call twice.
func (c *Consumer) Close() error {
	c.closeOnce.Do(func() {
		close(c.stop)
		c.cancel()
		<-c.pumpDone
		if err := c.r.Close(); err != nil {
			c.closeErr = fmt.Errorf("close consumer group=%s: %w", c.group, err)
		}
	})
	return c.closeErr
}
