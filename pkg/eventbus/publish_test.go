package eventbus

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceLog records every produce request a kfake cluster receives: the
// broker that got it and its partitions as "topic/partition".
type produceLog struct {
	mu   sync.Mutex
	reqs []seenRequest
}

type seenRequest struct {
	node  int32
	parts []string
}

// watchProduce starts recording k's produce requests. The control function
// only observes: it returns not-handled, so kfake handles each request as
// usual, after it was recorded.
func watchProduce(k *testinfra.Kafka) *produceLog {
	l := &produceLog{}
	k.Cluster.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		seen := seenRequest{node: k.Cluster.CurrentNode()}
		for _, t := range req.(*kmsg.ProduceRequest).Topics {
			for _, p := range t.Partitions {
				seen.parts = append(seen.parts, fmt.Sprintf("%s/%d", t.Topic, p.Partition))
			}
		}
		sort.Strings(seen.parts)
		l.mu.Lock()
		l.reqs = append(l.reqs, seen)
		l.mu.Unlock()
		return nil, nil, false
	})
	return l
}

// requests returns the produce requests recorded so far.
func (l *produceLog) requests() []seenRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seenRequest(nil), l.reqs...)
}

// readPartition returns the values of every record of topic/partition (a
// wire name), by offset, reading up to the high watermark.
func readPartition(t *testing.T, k *testinfra.Kafka, topic string, partition int) []string {
	t.Helper()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(k.Addrs...), Transport: tr}
	var out []string
	for offset, round := int64(0), 0; ; round++ {
		require.Less(t, round, 1000, "reading %s/%d", topic, partition)
		resp, err := client.Fetch(testCtx(t), &kafka.FetchRequest{Topic: topic, Partition: partition, Offset: offset, MinBytes: 1, MaxBytes: 8 << 20})
		require.NoError(t, err)
		require.NoError(t, resp.Error)
		for {
			r, err := resp.Records.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			v, err := io.ReadAll(r.Value)
			require.NoError(t, err)
			out = append(out, string(v))
			offset = r.Offset + 1
		}
		if offset >= resp.HighWatermark {
			return out
		}
	}
}

// published builds rounds records for each key of each topic, interleaved
// (round by round, topic by topic), valued "topic key round" (+ pad bytes),
// for topics of DefaultPartitions partitions.
// want maps each wire "topic/partition" to its values in publish order.
func published(cfg Config, topics, keys []string, rounds, pad int) (msgs []Message, want map[string][]string) {
	want = map[string][]string{}
	ids := allPartitionIDs(DefaultPartitions) // every topic the tests publish to has the default count
	for r := range rounds {
		for _, topic := range topics {
			for _, key := range keys {
				v := fmt.Sprintf("%s %s %d", topic, key, r)
				msgs = append(msgs, Message{Topic: topic, Key: []byte(key), Value: []byte(v + strings.Repeat(".", pad))})
				p := (&kafka.Hash{}).Balance(kafka.Message{Key: []byte(key)}, ids...)
				tp := fmt.Sprintf("%s/%d", cfg.topic(topic), p)
				want[tp] = append(want[tp], v)
			}
		}
	}
	return msgs, want
}

func allPartitionIDs(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return ids
}

// requireDelivered reads every partition in want and compares, ignoring
// the pad.
func requireDelivered(t *testing.T, k *testinfra.Kafka, want map[string][]string) {
	t.Helper()
	for tp, vs := range want {
		i := strings.LastIndexByte(tp, '/')
		var p int
		_, err := fmt.Sscan(tp[i+1:], &p)
		require.NoError(t, err)
		got := readPartition(t, k, tp[:i], p)
		for j := range got {
			got[j] = strings.TrimRight(got[j], ".")
		}
		require.Equal(t, vs, got, "records of %s", tp)
	}
}

// partsOf returns the sorted keys of want.
func partsOf(want map[string][]string) []string {
	var out []string
	for tp := range want {
		out = append(out, tp)
	}
	sort.Strings(out)
	return out
}

var threeTopics = []string{eventsv1.TopicTaskDispatch, eventsv1.TopicWorkflowEvents, eventsv1.TopicTaskComplete}

// TestPublishOneRequest: a Publish across three topics and every partition
// of each reaches the broker as one produce request and delivers every
// record, in order per key.
func TestPublishOneRequest(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, threeTopics...)
	p := b.producer(t)
	log := watchProduce(k)

	msgs, want := published(b.cfg, threeTopics, keysByPartition(t, DefaultPartitions), 5, 0)
	require.NoError(t, p.Publish(testCtx(t), msgs...))

	reqs := log.requests()
	require.Len(t, reqs, 1, "one produce request for the whole Publish")
	require.Equal(t, partsOf(want), reqs[0].parts)
	require.Len(t, reqs[0].parts, 3*DefaultPartitions)
	requireDelivered(t, k, want)
}

// TestPublishOneRequestPerLeader: on three brokers, a Publish sends one
// request to each leader, holding exactly the partitions it leads.
func TestPublishOneRequestPerLeader(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t, kfake.NumBrokers(3))
	b := newBus(t, k, threeTopics...)
	for _, topic := range threeTopics {
		for part := range DefaultPartitions {
			require.NoError(t, k.Cluster.MoveTopicPartition(b.cfg.topic(topic), int32(part), int32(part%3)))
		}
	}
	p := b.producer(t) // after the moves, so its first metadata is current
	log := watchProduce(k)

	msgs, want := published(b.cfg, threeTopics, keysByPartition(t, DefaultPartitions), 3, 0)
	require.NoError(t, p.Publish(testCtx(t), msgs...))

	reqs := log.requests()
	require.Len(t, reqs, 3, "one produce request per leader")
	byNode := map[int32][]string{}
	for _, r := range reqs {
		require.NotContains(t, byNode, r.node, "two requests to node %d", r.node)
		byNode[r.node] = r.parts
	}
	for node, parts := range byNode {
		for _, tp := range parts {
			i := strings.LastIndexByte(tp, '/')
			var part int32
			_, err := fmt.Sscan(tp[i+1:], &part)
			require.NoError(t, err)
			require.Equal(t, node, k.Cluster.LeaderFor(tp[:i], part), "%s sent to node %d", tp, node)
		}
	}
	requireDelivered(t, k, want)
}

// TestPublishBiggerThanOneRequest: one key's records, several times the
// request bound, sent with small records of other partitions in one call,
// all arrive and in order; the big partition's parts go in requests of
// their own.
func TestPublishBiggerThanOneRequest(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskDispatch, eventsv1.TopicWorkflowEvents)
	p := b.producer(t)
	log := watchProduce(k)

	const pad = 2000
	big, want := published(b.cfg, []string{eventsv1.TopicTaskDispatch}, []string{"run-big"}, 3*maxRequestBytes/pad, pad)
	small, wantSmall := published(b.cfg, []string{eventsv1.TopicWorkflowEvents}, keysByPartition(t, DefaultPartitions), 2, 0)
	for tp, vs := range wantSmall {
		want[tp] = vs
	}
	require.NoError(t, p.Publish(testCtx(t), append(big, small...)...))

	reqs := log.requests()
	bigParts := 0
	for _, r := range reqs {
		if len(r.parts) == 1 && strings.HasPrefix(r.parts[0], b.cfg.topic(eventsv1.TopicTaskDispatch)) {
			bigParts++
		}
	}
	require.GreaterOrEqual(t, bigParts, 3, "the big partition in parts of its own: %v", reqs)
	require.Len(t, reqs, bigParts+1, "one request for the small partitions: %v", reqs)
	requireDelivered(t, k, want)
}

// TestPublishUnknownTopic: a topic that does not exist fails the whole
// call before any request is sent, naming the topic; nothing of the other
// topics is written, and the producer keeps working.
func TestPublishUnknownTopic(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskDispatch)
	p := b.producer(t)
	log := watchProduce(k)

	msgs, want := published(b.cfg, []string{eventsv1.TopicTaskDispatch}, []string{"run-1", "run-2"}, 2, 0)
	missing := Message{Topic: eventsv1.TopicWorkflowEvents, Key: []byte("run-1"), Value: []byte("x")}
	err := p.Publish(testCtx(t), append(msgs, missing)...)
	require.ErrorContains(t, err, "topic="+b.cfg.topic(eventsv1.TopicWorkflowEvents))
	require.ErrorContains(t, err, "run EnsureTopics first")
	require.Empty(t, log.requests(), "nothing sent")
	for tp := range want {
		i := strings.LastIndexByte(tp, '/')
		var part int
		_, err := fmt.Sscan(tp[i+1:], &part)
		require.NoError(t, err)
		require.Empty(t, readPartition(t, k, tp[:i], part))
	}

	require.NoError(t, p.Publish(testCtx(t), msgs...))
	requireDelivered(t, k, want)
}

// TestPublishPartlyRefused: when the broker refuses one partition of a
// request (its records exceed the topic's max.message.bytes), the error
// names that topic, partition and record count and no other; the other
// partitions of the same request are written. A partition refused in its
// first part has its later parts held back, and the error says so.
func TestPublishPartlyRefused(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskDispatch)
	const tiny = "tiny"
	wireTiny := b.cfg.topic(tiny)
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := &kafka.Client{Addr: kafka.TCP(k.Addr), Transport: tr}
	resp, err := client.CreateTopics(testCtx(t), &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: wireTiny, NumPartitions: 1, ReplicationFactor: 1,
		ConfigEntries: []kafka.ConfigEntry{{ConfigName: "max.message.bytes", ConfigValue: "1000"}},
	}}})
	require.NoError(t, err)
	require.NoError(t, resp.Errors[wireTiny])
	p := b.producer(t)
	log := watchProduce(k)

	msgs, want := published(b.cfg, []string{eventsv1.TopicTaskDispatch}, keysByPartition(t, DefaultPartitions), 2, 0)
	tooBig := Message{Topic: tiny, Key: []byte("run-1"), Value: make([]byte, 5000)}
	err = p.Publish(testCtx(t), append(msgs, tooBig, tooBig)...)
	require.ErrorIs(t, err, kafka.MessageSizeTooLarge)
	require.ErrorContains(t, err, "publish 2 records topic="+wireTiny+" partition=0")
	require.NotContains(t, err.Error(), b.cfg.topic(eventsv1.TopicTaskDispatch))
	require.Len(t, log.requests(), 1)
	requireDelivered(t, k, want)

	// A partition too big for one request, refused in its first part.
	huge := make([]Message, 3*maxRequestBytes/5000)
	for i := range huge {
		huge[i] = tooBig
	}
	err = p.Publish(testCtx(t), huge...)
	require.ErrorIs(t, err, kafka.MessageSizeTooLarge)
	require.ErrorIs(t, err, errNotSent)
	require.ErrorContains(t, err, "topic="+wireTiny+" partition=0")
	require.Len(t, log.requests(), 2, "later parts held back")
}
