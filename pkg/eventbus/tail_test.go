package eventbus

import (
	"context"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// openTail opens a tail of topic on b, closed on cleanup.
func (b bus) openTail(t *testing.T, topic string) *Tail {
	t.Helper()
	tl, err := OpenTail(testCtx(t), b.cfg, topic)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tl.Close()) })
	return tl
}

// TestTailReadsWhatFollowsOpen: records on every partition before OpenTail
// are not delivered, every record after it is, in order per partition, and
// nothing else.
func TestTailReadsWhatFollowsOpen(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	p := b.producer(t)
	keys := keysByPartition(t, kafkaPartitions(t, b, eventsv1.TopicTaskComplete))
	for _, key := range keys {
		publishResults(t, p, key, 3) // attempts 0..2: before
	}
	tl := b.openTail(t, eventsv1.TopicTaskComplete)
	var after []Message
	for _, key := range keys {
		for i := 3; i < 6; i++ { // attempts 3..5: after
			after = append(after, result(t, key, i))
		}
	}
	require.NoError(t, p.Publish(testCtx(t), after...))

	got := fetchN(t, tl, len(after))
	require.Len(t, got, len(after))
	next := map[string]int{}
	for _, m := range got {
		key := string(m.Key)
		if next[key] == 0 {
			next[key] = 3
		}
		require.Equal(t, next[key], attempt(t, m), "key %s: records out of order or from before the tail opened", key)
		next[key]++
	}
	for _, key := range keys {
		require.Equal(t, 6, next[key], "key %s", key)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	extra, err := tl.Fetch(ctx, 10)
	require.ErrorIs(t, err, context.DeadlineExceeded, "unexpected records %v", extra)
}

// kafkaPartitions returns how many partitions topic has on b.
func kafkaPartitions(t *testing.T, b bus, topic string) int {
	t.Helper()
	ends, err := partitionEnds(testCtx(t), b.cfg, b.cfg.topic(topic))
	require.NoError(t, err)
	require.NotEmpty(t, ends)
	return len(ends)
}

// TestTailMissingTopic: a topic that does not exist is an error at once.
func TestTailMissingTopic(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k)
	_, err := OpenTail(testCtx(t), b.cfg, "no.such.topic")
	require.ErrorContains(t, err, "no.such.topic")
	require.ErrorIs(t, err, errUnknownTopic)
}

// TestTailClose: a Fetch blocked when the tail closes returns ErrClosed, so
// does every later Fetch, and Close is safe twice.
func TestTailClose(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	tl, err := OpenTail(testCtx(t), b.cfg, eventsv1.TopicTaskComplete)
	require.NoError(t, err)
	fetched := make(chan error, 1)
	go func() {
		_, err := tl.Fetch(testCtx(t), 1)
		fetched <- err
	}()
	require.NoError(t, tl.Close()) // whether or not Fetch blocks yet, it must end with ErrClosed
	select {
	case err := <-fetched:
		require.ErrorIs(t, err, ErrClosed)
	case <-time.After(waitFor):
		t.Fatal("Fetch still blocked after Close")
	}
	_, err = tl.Fetch(testCtx(t), 1)
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, tl.Close())
	_, err = tl.Fetch(testCtx(t), 0)
	require.Error(t, err)
}

// TestTailSurvivesBrokerRestart: a tail open while the broker restarts
// reads what is produced once it is back.
func TestTailSurvivesBrokerRestart(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	p := b.producer(t)
	tl := b.openTail(t, eventsv1.TopicTaskComplete)
	publishResults(t, p, "run-1", 1)
	require.Equal(t, 0, attempt(t, fetchN(t, tl, 1)[0]))

	k.Stop()
	k.Restart(t)
	recoverAfterOutage(t, p, tl, "tail")
}

// TestTailAcrossLeaderMovesAndBrokerLoss: a tail of a three-broker
// cluster's topic keeps reading every partition when every partition gets
// a new leader and when a broker dies and comes back.
func TestTailAcrossLeaderMovesAndBrokerLoss(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafkaCluster(t, 3)
	topic := eventsv1.TopicTaskComplete
	b := newBus(t, k, topic)
	p := b.producer(t)
	keys := keysByPartition(t, DefaultPartitions)
	for _, key := range keys {
		require.NoError(t, p.Publish(testCtx(t), seqRecord(topic, key, -1))) // before: never read
	}
	tl := b.openTail(t, topic)
	var got []Message
	sent := 0
	phase := func(name string) {
		t.Helper()
		publishSeqs(t, p, topic, keys, sent, sent+10, name)
		sent += 10
		ctx := testCtx(t)
		for seen := distinctValues(got); seen < sent*len(keys); seen = distinctValues(got) {
			msgs, err := tl.Fetch(ctx, 100)
			if err != nil {
				require.NoError(t, ctx.Err(), "%s: read %d of %d: %v", name, seen, sent*len(keys), err)
				t.Logf("%s: fetch: %v", name, err) // transient while leaders move
				continue
			}
			got = append(got, msgs...)
		}
		t.Logf("phase %s: read", name)
	}
	phase("before")
	k.Cluster.ShufflePartitionLeaders()
	phase("after every partition got a new leader")
	k.StopBroker(t, 0)
	phase("with broker 0 dead")
	k.StartBroker(t, 0)
	phase("after broker 0 came back")
	requireKeyOrder(t, got, keys, sent)
	for _, m := range got {
		_, seq := seqOf(t, m)
		require.GreaterOrEqual(t, seq, 0, "record %q was appended before the tail opened", m.Value)
	}
}

// distinctValues counts the distinct record values in msgs.
func distinctValues(msgs []Message) int {
	seen := map[string]bool{}
	for _, m := range msgs {
		seen[string(m.Value)] = true
	}
	return len(seen)
}
