package eventbus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

// Bounds for waiting in contract tests. Group joins and rebalances against
// the tuned timeouts take a few seconds; the race detector slows them down.
const (
	waitFor = 30 * time.Second
	tick    = 20 * time.Millisecond
)

// bus is one test's view of a broker: a config with a unique topic prefix.
type bus struct {
	cfg   Config
	kafka *testinfra.Kafka
}

// newBus returns a bus on k with a unique prefix and its topics ensured.
func newBus(t *testing.T, k *testinfra.Kafka, topics ...string) bus {
	t.Helper()
	b := bus{cfg: Config{Brokers: k.Addrs, TopicPrefix: testinfra.UniqueName(t, "t") + "."}, kafka: k}
	if len(topics) > 0 {
		require.NoError(t, EnsureTopics(testCtx(t), b.cfg, topics...))
	}
	return b
}

// testCtx returns a context bounded by waitFor, cancelled on cleanup.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

func (b bus) producer(t *testing.T) *Producer {
	t.Helper()
	p, err := NewProducer(b.cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}

func (b bus) consumer(t *testing.T, group string, topics ...string) *Consumer {
	t.Helper()
	c, err := NewConsumer(t.Context(), b.cfg, group, topics...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// result builds a TaskResult message keyed by run with attempt i.
func result(t *testing.T, run string, i int) Message {
	t.Helper()
	m, err := NewMessage(eventsv1.TopicTaskComplete, run, &eventsv1.TaskResult{RunId: run, NodeId: "n", Attempt: int32(i)})
	require.NoError(t, err)
	return m
}

// publishResults publishes n results of run (attempts 0..n-1) and returns them.
func publishResults(t *testing.T, p *Producer, run string, n int) []Message {
	t.Helper()
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i] = result(t, run, i)
	}
	require.NoError(t, p.Publish(testCtx(t), msgs...))
	return msgs
}

// attempt decodes the attempt number of a result message.
func attempt(t *testing.T, m Message) int {
	t.Helper()
	var r eventsv1.TaskResult
	require.NoError(t, Decode(m, &r))
	return int(r.Attempt)
}

// fetchN fetches from c (a Consumer or a Tail) until n messages arrived
// (more may come in the last batch).
func fetchN(t *testing.T, c Fetcher, n int) []Message {
	t.Helper()
	ctx := testCtx(t)
	var got []Message
	for len(got) < n {
		msgs, err := c.Fetch(ctx, n-len(got))
		require.NoError(t, err, "fetched %d of %d", len(got), n)
		got = append(got, msgs...)
	}
	return got
}

// keysByPartition returns one key per partition 0..n-1 under kafka.Hash.
func keysByPartition(t *testing.T, n int) []string {
	t.Helper()
	parts := make([]int, n)
	for i := range parts {
		parts[i] = i
	}
	keys := make([]string, n)
	found := 0
	for i := 0; found < n && i < 10000; i++ {
		k := "run-" + strconv.Itoa(i)
		p := (&kafka.Hash{}).Balance(kafka.Message{Key: []byte(k)}, parts...)
		if keys[p] == "" {
			keys[p] = k
			found++
		}
	}
	require.Equal(t, n, found, "no key for some partition")
	return keys
}

// collector fetches from a consumer in the background, committing each
// batch, until stopped; it records every message and unexpected error.
type collector struct {
	mu   sync.Mutex
	got  []Message
	errs []error
	done chan struct{}
}

// collect starts a collector on c; it stops on test cleanup or c.Close.
func collect(t *testing.T, c *Consumer) *collector {
	ctx, cancel := context.WithCancel(context.Background())
	col := &collector{done: make(chan struct{})}
	t.Cleanup(func() { cancel(); <-col.done })
	go col.run(ctx, c)
	return col
}

func (col *collector) run(ctx context.Context, c *Consumer) {
	defer close(col.done)
	for {
		msgs, err := c.Fetch(ctx, 100)
		if err == nil {
			err = c.Commit(ctx, msgs...)
		}
		col.mu.Lock()
		col.got = append(col.got, msgs...)
		if err != nil && ctx.Err() == nil && !errors.Is(err, ErrClosed) {
			col.errs = append(col.errs, err)
		}
		col.mu.Unlock()
		if ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return
		}
	}
}

// snapshot returns copies of what was collected so far.
func (col *collector) snapshot() ([]Message, []error) {
	col.mu.Lock()
	defer col.mu.Unlock()
	return append([]Message(nil), col.got...), append([]error(nil), col.errs...)
}

// has reports whether the collector saw a message with value-id id.
func (col *collector) has(t *testing.T, ids ...string) bool {
	got, errs := col.snapshot()
	require.Empty(t, errs)
	seen := map[string]bool{}
	for _, m := range got {
		seen[fmt.Sprintf("%s/%d", m.Key, attempt(t, m))] = true
	}
	for _, id := range ids {
		if !seen[id] {
			return false
		}
	}
	return true
}

// recoverAfterOutage publishes attempt 1 of run-1 until p has recovered from
// a broker outage, then fetches from f until that record arrives; errors on
// the way are transient (logged), what names f in them.
func recoverAfterOutage(t *testing.T, p *Producer, f Fetcher, what string) {
	t.Helper()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor/3)
		defer cancel()
		return p.Publish(ctx, result(t, "run-1", 1)) == nil
	}, waitFor, tick, "producer never recovered")
	ctx := testCtx(t)
	for {
		msgs, err := f.Fetch(ctx, 10)
		if err != nil {
			require.NoError(t, ctx.Err(), "%s never recovered: %v", what, err)
			require.NotErrorIs(t, err, ErrClosed)
			t.Logf("%s: fetch after the outage: %v", what, err)
			continue
		}
		if attempt(t, msgs[len(msgs)-1]) == 1 {
			return
		}
	}
}
