package eventbus

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

// committedOffset returns group's committed offset of topic's partition.
func committedOffset(t *testing.T, b bus, group, topic string, partition int) int64 {
	t.Helper()
	// A fresh transport: kafka.DefaultTransport would reuse a connection
	// to the stopped broker and fail with unexpected EOF.
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(b.kafka.Addrs...), Transport: tr}
	resp, err := client.OffsetFetch(testCtx(t), &kafka.OffsetFetchRequest{
		GroupID: group, Topics: map[string][]int{b.cfg.topic(topic): {partition}},
	})
	require.NoError(t, err)
	require.NoError(t, resp.Error)
	for _, p := range resp.Topics[b.cfg.topic(topic)] {
		if p.Partition == partition {
			require.NoError(t, p.Error)
			return p.CommittedOffset
		}
	}
	t.Fatalf("no offset for group=%s topic=%s partition=%d", group, topic, partition)
	return 0
}

// TestBrokerRestart stops the broker and reopens it on the same port and
// DataDir: records and committed offsets survive, and a producer and a
// consumer that lived through the restart carry on.
func TestBrokerRestart(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	p := b.producer(t)
	group := testinfra.UniqueName(t, "g")
	c := b.consumer(t, group, eventsv1.TopicTaskComplete)

	before := make([]Message, 5)
	for i := range before {
		before[i] = result(t, "run-1", i)
	}
	require.NoError(t, p.Publish(testCtx(t), before...))
	got := fetchN(t, c, 5)
	require.NoError(t, c.Commit(testCtx(t), got[2])) // offsets 0..2 done
	part := got[0].Partition
	require.Equal(t, int64(3), committedOffset(t, b, group, eventsv1.TopicTaskComplete, part))

	k.Stop()
	down, cancel := context.WithTimeout(context.Background(), time.Second)
	require.Error(t, p.Publish(down, result(t, "run-1", 99)), "publish succeeded with the broker down")
	cancel()
	k.Restart(t)

	// Records and the committed offset were persisted.
	require.Equal(t, int64(3), committedOffset(t, b, group, eventsv1.TopicTaskComplete, part))
	fresh := b.consumer(t, testinfra.UniqueName(t, "g"), eventsv1.TopicTaskComplete)
	old := fetchN(t, fresh, 5)
	for i, m := range old {
		require.Equal(t, i, attempt(t, m))
	}

	// The producer reconnects (its first attempts may fail while metadata
	// and connections are stale; each try is bounded).
	start, tries := time.Now(), 0
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor/3)
		defer cancel()
		tries++
		err := p.Publish(ctx, result(t, "run-1", 5))
		if err != nil {
			t.Logf("publish after restart, try %d: %v", tries, err)
		}
		return err == nil
	}, waitFor, tick, "producer never recovered")
	t.Logf("producer recovered after %d tries in %s", tries, time.Since(start))

	// The old consumer rejoins and reaches the new record (after any
	// redelivery of uncommitted 3 and 4), and can commit it. kafka-go rejoins
	// under a new member id and kfake restored the old member from DataDir,
	// so the join waits RebalanceTimeout (5 s) for the ghost to rejoin.
	ctx := testCtx(t)
	start = time.Now()
	var last Message
	for last.Value == nil || attempt(t, last) != 5 {
		msgs, err := c.Fetch(ctx, 10)
		if err != nil {
			require.NoError(t, ctx.Err(), "consumer never recovered: %v", err)
			t.Logf("fetch after restart: %v", err) // transient, e.g. the coordinator was down
			continue
		}
		last = msgs[len(msgs)-1]
	}
	t.Logf("consumer reached the new record in %s", time.Since(start))
	require.Eventually(t, func() bool { return c.Commit(ctx, last) == nil }, waitFor, tick)
	require.GreaterOrEqual(t, committedOffset(t, b, group, eventsv1.TopicTaskComplete, part), int64(6))
}

// TestConsumerSurvivesResetConnections takes the broker down and, on its
// port, accepts connections and closes them at once (what clients see while
// a killed broker restarts): kafka-go's group loop then reports io.EOF from
// failed joins as a fetch error. The consumer must take that as transient
// and read the records produced once the broker is back.
func TestConsumerSurvivesResetConnections(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	p := b.producer(t)
	c := b.consumer(t, testinfra.UniqueName(t, "g"), eventsv1.TopicTaskComplete)
	require.NoError(t, p.Publish(testCtx(t), result(t, "run-1", 0)))
	require.NoError(t, c.Commit(testCtx(t), fetchN(t, c, 1)...))

	k.Stop()
	resets := resetConnections(t, k.Addr)
	// Hold the outage past several heartbeats and join attempts (1 s
	// heartbeat, 250 ms join backoff, three joins before kafka-go reports).
	require.Eventually(t, func() bool { return resets.Load() >= 10 }, waitFor, tick, "no client reconnected")
	hold := time.NewTimer(3 * time.Second)
	<-hold.C
	resets.stop()
	k.Restart(t)

	recoverAfterOutage(t, p, c, "consumer")
}

// resetListener accepts connections on an address and closes each at once.
type resetListener struct {
	ln   net.Listener
	n    atomic.Int64
	done chan struct{}
}

// resetConnections listens on addr (retrying the bind briefly while the
// old listener closes) until stop.
func resetConnections(t *testing.T, addr string) *resetListener {
	t.Helper()
	var ln net.Listener
	require.Eventually(t, func() bool {
		var err error
		ln, err = net.Listen("tcp", addr)
		return err == nil
	}, waitFor, tick, "cannot listen on %s", addr)
	r := &resetListener{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			r.n.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(r.stop)
	return r
}

// Load is how many connections were reset.
func (r *resetListener) Load() int64 { return r.n.Load() }

// stop closes the listener and waits for its loop; safe twice.
func (r *resetListener) stop() {
	_ = r.ln.Close()
	<-r.done
}
