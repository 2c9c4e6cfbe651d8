package eventbus

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestPublishRetriesPartitionErrors: a partition answered three times with
// an error that a new leader may cure is sent again until acknowledged,
// and Publish returns nil; the other partitions of the same requests are
// written once. Errors that kfake answers after writing (as Kafka does)
// leave duplicates, but the order of first writes holds. An error that
// refuses the records themselves is not retried.
func TestPublishRetriesPartitionErrors(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafkaCluster(t, 3)
	tests := []struct {
		name    string
		err     *kerr.Error
		written int // times the faulted partition's records are written
	}{
		{"not leader", kerr.NotLeaderForPartition, 1},
		{"leader not available", kerr.LeaderNotAvailable, 1},
		{"unknown topic or partition", kerr.UnknownTopicOrPartition, 1},
		{"not enough replicas", kerr.NotEnoughReplicas, 1},
		{"not enough replicas after append", kerr.NotEnoughReplicasAfterAppend, 4},
		{"request timed out after append", kerr.RequestTimedOut, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newBus(t, k, eventsv1.TopicTaskDispatch)
			p := b.producer(t)
			wire := b.cfg.topic(eventsv1.TopicTaskDispatch)
			f := k.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: wire, Partitions: []int32{0}, Err: tt.err, Count: 3})
			t.Cleanup(f.Remove)

			msgs, want := published(b.cfg, []string{eventsv1.TopicTaskDispatch}, keysByPartition(t, DefaultPartitions), 3, 0)
			require.NoError(t, p.Publish(testCtx(t), msgs...))
			require.Equal(t, 3, f.Hits())
			faulted := wire + "/0"
			require.Len(t, want[faulted], 3)
			want[faulted] = repeat(want[faulted], tt.written)
			requireDelivered(t, k, want)
		})
	}
	t.Run("message too large is final", func(t *testing.T) {
		t.Parallel()
		b := newBus(t, k, eventsv1.TopicTaskDispatch)
		p := b.producer(t)
		wire := b.cfg.topic(eventsv1.TopicTaskDispatch)
		f := k.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: wire, Partitions: []int32{0}, Err: kerr.MessageTooLarge, Count: -1})
		t.Cleanup(f.Remove)
		err := p.Publish(testCtx(t), Message{Topic: eventsv1.TopicTaskDispatch, Key: []byte(keysByPartition(t, DefaultPartitions)[0]), Value: []byte("x")})
		require.ErrorIs(t, err, kafka.MessageSizeTooLarge)
		require.ErrorContains(t, err, "publish 1 records topic="+wire+" partition=0")
		require.Equal(t, 1, f.Hits(), "sent once")
	})
}

// repeat returns n copies of vs, one after another.
func repeat(vs []string, n int) []string {
	var out []string
	for range n {
		out = append(out, vs...)
	}
	return out
}

// TestPublishFailsAfterPublishTimeout: a partition that never stops
// answering NOT_LEADER fails the Publish once PublishTimeout has passed,
// naming the partition; the others are written.
func TestPublishFailsAfterPublishTimeout(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafkaCluster(t, 3)
	b := newBus(t, k, eventsv1.TopicTaskDispatch)
	b.cfg.PublishTimeout = 500 * time.Millisecond
	p := b.producer(t)
	wire := b.cfg.topic(eventsv1.TopicTaskDispatch)
	f := k.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: wire, Partitions: []int32{0}, Err: kerr.NotLeaderForPartition, Count: -1})
	t.Cleanup(f.Remove)

	msgs, want := published(b.cfg, []string{eventsv1.TopicTaskDispatch}, keysByPartition(t, DefaultPartitions), 2, 0)
	start := time.Now()
	err := p.Publish(testCtx(t), msgs...)
	require.ErrorIs(t, err, kafka.NotLeaderForPartition)
	require.ErrorContains(t, err, "gave up after")
	require.ErrorContains(t, err, "publish 2 records topic="+wire+" partition=0")
	require.Less(t, time.Since(start), waitFor/2, "bounded by PublishTimeout")
	require.Greater(t, f.Hits(), 1, "retried")
	want[wire+"/0"] = nil
	requireDelivered(t, k, want)
}

// TestPublishAcrossLeaderMovesAndBrokerLoss publishes 2,000 keyed records
// from four goroutines, each sending its own keys' records one Publish
// after another, while partition leaders are moved and shuffled, and while
// broker 0 is killed (its connections closed, its port refusing) and later
// started again. Every Publish must succeed; a consumer group then reads
// every record, with each key's records in order (counting first
// deliveries: a retried write may come twice).
func TestPublishAcrossLeaderMovesAndBrokerLoss(t *testing.T) {
	t.Parallel()
	const (
		writers   = 4
		keysEach  = 10 // one record of each per Publish
		perKey    = 50
		total     = writers * keysEach * perKey
		calls     = writers * perKey
		chaosStep = calls / 25 // Publish calls between two moves
	)
	k := testinfra.StartKafkaCluster(t, 3)
	topic := eventsv1.TopicTaskDispatch
	b := newBus(t, k, topic)
	p := b.producer(t)
	var keys []string
	for i := range writers * keysEach {
		keys = append(keys, fmt.Sprintf("run-%d", i))
	}

	ctx := testCtx(t)
	var done atomic.Int64
	errs := make(chan error, calls)
	var wg sync.WaitGroup
	for w := range writers {
		mine := keys[w*keysEach : (w+1)*keysEach]
		wg.Go(func() {
			for seq := range perKey {
				batch := make([]Message, len(mine))
				for i, key := range mine {
					batch[i] = seqRecord(topic, key, seq)
				}
				if err := p.Publish(ctx, batch...); err != nil {
					errs <- fmt.Errorf("writer %d record %d: %w", w, seq, err)
				}
				done.Add(1)
			}
		})
	}
	moves := unsettle(t, k, b.cfg.topic(topic), &done, chaosStep, calls)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("%d leader moves, broker 0 down for part of them", moves)

	c := b.consumer(t, testinfra.UniqueName(t, "g"), topic)
	got := fetchDistinct(t, c, total)
	requireKeyOrder(t, got, keys, perKey)
}

// unsettle moves partition leaders of the wire topic each time step more
// Publish calls have returned, until calls reaches last: mostly kfake's
// ShufflePartitionLeaders (a new leader for every partition) and
// MoveTopicPartition (one partition to a given live broker), with broker 0
// killed a quarter of the way and started again past half way. It returns
// how many moves it made.
func unsettle(t *testing.T, k *testinfra.Kafka, wire string, calls *atomic.Int64, step, last int) int {
	t.Helper()
	poll := time.NewTicker(2 * time.Millisecond)
	defer poll.Stop()
	deadline := time.After(waitFor)
	live := []int32{0, 1, 2}
	moves := 0
	for next := int64(step); next < int64(last); next += int64(step) {
		for calls.Load() < next {
			select {
			case <-poll.C:
			case <-deadline:
				t.Fatalf("publishing stalled at %d calls of %d", calls.Load(), last)
			}
		}
		switch frac := float64(next) / float64(last); {
		case frac >= 0.25 && live[0] == 0:
			k.StopBroker(t, 0)
			live = []int32{1, 2}
		case frac >= 0.6 && live[0] != 0:
			k.StartBroker(t, 0)
			live = []int32{0, 1, 2}
		case moves%2 == 0:
			k.Cluster.ShufflePartitionLeaders()
		default:
			part := int32(rand.IntN(DefaultPartitions))
			require.NoError(t, k.Cluster.MoveTopicPartition(wire, part, live[rand.IntN(len(live))]))
		}
		moves++
	}
	return moves
}

// fetchDistinct fetches from c until n distinct records arrived and
// returns everything fetched, duplicates included, committing nothing.
func fetchDistinct(t *testing.T, c *Consumer, n int) []Message {
	t.Helper()
	ctx := testCtx(t)
	seen := map[string]bool{}
	var got []Message
	for len(seen) < n {
		msgs, err := c.Fetch(ctx, 500)
		require.NoError(t, err, "fetched %d distinct of %d", len(seen), n)
		for _, m := range msgs {
			seen[string(m.Value)] = true
		}
		got = append(got, msgs...)
	}
	if dup := len(got) - n; dup > 0 {
		t.Logf("%d records delivered twice (retried writes)", dup)
	}
	return got
}

// TestPublishFailsFastWithEveryBrokerDown: with no broker reachable, a
// Publish gives up after a couple of rounds without metadata instead of
// retrying until PublishTimeout, so its caller hears of the outage at once
// (the orchestrator logs it and retries its batch; the api answers 503).
func TestPublishFailsFastWithEveryBrokerDown(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafkaCluster(t, 3)
	b := newBus(t, k, eventsv1.TopicTaskDispatch)
	b.cfg.PublishTimeout = time.Hour
	p := b.producer(t)
	msgs, _ := published(b.cfg, []string{eventsv1.TopicTaskDispatch}, keysByPartition(t, DefaultPartitions), 1, 0)
	require.NoError(t, p.Publish(testCtx(t), msgs...))
	k.Stop()
	start := time.Now()
	err := p.Publish(testCtx(t), msgs...)
	require.Error(t, err)
	require.Less(t, time.Since(start), waitFor/2, "gave up without waiting for PublishTimeout: %v", err)
}
