package eventbus

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
)

// DefaultCommitDelay is how long a Committer gathers handled records
// before committing them.
const DefaultCommitDelay = 5 * time.Millisecond

// commitTimeout bounds one commit.
const commitTimeout = 10 * time.Second

// Committer commits handled records beside the caller. Add hands it records
// whose effects are done; a goroutine commits them, merged, once Delay has
// passed since the first record of a round, so that a busy consumer commits
// a few times per Delay instead of after every batch, and a commit never
// competes with the records that follow for the broker and the CPU at the
// moment they are handled. Nobody waits for a commit: the rule "commit after
// the effects" holds because records are added only once handled. A
// failed commit is logged and the records are delivered again after a
// rebalance or restart (handlers are idempotent), exactly as if the
// process had died before committing. Safe for concurrent use.
type Committer struct {
	cons  OffsetCommitter
	delay time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	pending map[partitionKey]Message // the highest-offset record added per partition
	wake    chan struct{}            // capacity 1: "records were added"
	closing chan struct{}
	done    chan struct{}
	once    sync.Once
}

// partitionKey names one partition of one topic.
type partitionKey struct {
	topic     string
	partition int
}

// NewCommitter starts a Committer for cons (a *Consumer); delay ≤ 0
// commits as soon as the goroutine gets to it. Close it before closing cons.
func NewCommitter(cons OffsetCommitter, delay time.Duration, log *slog.Logger) *Committer {
	c := &Committer{
		cons: cons, delay: delay, log: log, pending: map[partitionKey]Message{},
		wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{}),
	}
	go c.loop()
	return c
}

// Add queues msgs for commit. It never blocks on the broker. Records added
// after Close are not committed.
func (c *Committer) Add(msgs ...Message) {
	if len(msgs) == 0 {
		return
	}
	c.mu.Lock()
	for _, m := range msgs {
		k := partitionKey{m.Topic, m.Partition}
		if cur, ok := c.pending[k]; !ok || m.Offset > cur.Offset {
			c.pending[k] = m
		}
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Close commits what is pending (at once, without waiting for the delay)
// and stops the goroutine. Safe to call twice.
func (c *Committer) Close() {
	c.once.Do(func() { close(c.closing) })
	<-c.done
}

func (c *Committer) loop() {
	defer close(c.done)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-c.wake:
		case <-c.closing:
			c.flush()
			return
		}
		if c.delay > 0 {
			t.Reset(c.delay)
			select {
			case <-t.C:
			case <-c.closing:
				c.flush()
				return
			}
		}
		c.flush()
	}
}

// flush commits the pending records.
func (c *Committer) flush() {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return
	}
	msgs := make([]Message, 0, len(c.pending))
	for _, m := range c.pending {
		msgs = append(msgs, m)
	}
	clear(c.pending)
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	if err := c.cons.Commit(ctx, msgs...); err != nil {
		// A rebalance moved a partition, or the broker is away: its next
		// owner gets the records again and handles them idempotently.
		c.log.Warn("commit failed; records will be delivered again", logkey.Partitions, len(msgs), logkey.Err, err)
	}
}
