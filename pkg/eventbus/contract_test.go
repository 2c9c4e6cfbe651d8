package eventbus

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"testing"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

// TestContract runs kafka-go (through this package) against kfake over TCP.
// The subtests share one broker and isolate themselves by topic prefix; they
// all use the same logical topic names, so a prefix leak would show up as
// extra messages.
func TestContract(t *testing.T) {
	k := testinfra.StartKafka(t)
	for name, test := range map[string]func(*testing.T, *testinfra.Kafka){
		"EnsureTopics":       testEnsureTopics,
		"GroupSplitAndLeave": testGroupSplitAndLeave,
		"FetchBatch":         testFetchBatch,
		"Closed":             testClosed,
		"ConsumerNeedsTopic": testConsumerNeedsTopic,
		"ManySmallRecords":   testManySmallRecords,
	} {
		t.Run(name, func(t *testing.T) { t.Parallel(); test(t, k) })
	}
}

// partitionCounts returns the partition count of each wire topic name.
func partitionCounts(t *testing.T, k *testinfra.Kafka, names ...string) map[string]int {
	t.Helper()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(k.Addr), Transport: tr}
	resp, err := client.Metadata(testCtx(t), &kafka.MetadataRequest{Topics: names})
	require.NoError(t, err)
	out := map[string]int{}
	for _, tp := range resp.Topics {
		if tp.Error == nil {
			out[tp.Name] = len(tp.Partitions)
		}
	}
	return out
}

// testEnsureTopics creates topics and DLQs with cfg.Partitions, runs again
// without error, and leaves an existing topic's partition count alone.
func testEnsureTopics(t *testing.T, k *testinfra.Kafka) {
	b := newBus(t, k)
	b.cfg.Partitions = 3
	ctx := testCtx(t)
	require.NoError(t, EnsureTopics(ctx, b.cfg, eventsv1.TopicWorkflowStart, eventsv1.TopicTaskDispatch))
	require.NoError(t, EnsureTopics(ctx, b.cfg, eventsv1.TopicWorkflowStart, eventsv1.TopicTaskDispatch))
	b.cfg.Partitions = 5
	require.NoError(t, EnsureTopics(ctx, b.cfg, eventsv1.TopicTaskDispatch, eventsv1.TopicWorkflowEvents))

	p := b.cfg.TopicPrefix
	require.Equal(t, map[string]int{
		p + "workflow.start": 3, p + "workflow.start.dlq": 3,
		p + "task.dispatch": 3, p + "task.dispatch.dlq": 3,
		p + "workflow.events": 5, p + "workflow.events.dlq": 5,
	}, partitionCounts(t, k,
		p+"workflow.start", p+"workflow.start.dlq", p+"task.dispatch", p+"task.dispatch.dlq",
		p+"workflow.events", p+"workflow.events.dlq", p+"task.complete"))
}

// round publishes one message per key with attempt r and returns their ids.
func round(t *testing.T, p *Producer, keys []string, r int) []string {
	t.Helper()
	msgs := make([]Message, len(keys))
	ids := make([]string, len(keys))
	for i, k := range keys {
		msgs[i] = result(t, k, r)
		ids[i] = fmt.Sprintf("%s/%d", k, r)
	}
	require.NoError(t, p.Publish(testCtx(t), msgs...))
	return ids
}

// partitionsOf returns the sorted partitions of col's messages of round r.
func partitionsOf(t *testing.T, col *collector, r int) []int {
	got, _ := col.snapshot()
	set := map[int]bool{}
	for _, m := range got {
		if attempt(t, m) == r {
			set[m.Partition] = true
		}
	}
	out := make([]int, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

// filterRound returns the messages of round r.
func filterRound(t *testing.T, msgs []Message, r int) []Message {
	var out []Message
	for _, m := range msgs {
		if attempt(t, m) == r {
			out = append(out, m)
		}
	}
	return out
}

// testGroupSplitAndLeave: two members of one group split the partitions;
// when one closes, the other receives new records of every partition.
func testGroupSplitAndLeave(t *testing.T, k *testinfra.Kafka) {
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	p := b.producer(t)
	keys := keysByPartition(t, DefaultPartitions)
	group := testinfra.UniqueName(t, "g")
	ca, err := NewConsumer(t.Context(), b.cfg, group, eventsv1.TopicTaskComplete)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ca.Close() }) // closed below; twice is fine
	cb := b.consumer(t, group, eventsv1.TopicTaskComplete)
	a, bb := collect(t, ca), collect(t, cb)

	// Publish rounds until both members have received something: then both
	// hold partitions in one stable generation.
	r := 0
	require.Eventually(t, func() bool {
		r++
		round(t, p, keys, r)
		gotA, _ := a.snapshot()
		gotB, _ := bb.snapshot()
		return len(gotA) > 0 && len(gotB) > 0
	}, waitFor, 5*tick, "both members never received records")
	r++
	ids := round(t, p, keys, r)
	require.Eventually(t, func() bool {
		return len(partitionsOf(t, a, r))+len(partitionsOf(t, bb, r)) == len(keys)
	}, waitFor, tick)
	pa, pb := partitionsOf(t, a, r), partitionsOf(t, bb, r)
	require.NotEmpty(t, pa)
	require.NotEmpty(t, pb)
	require.ElementsMatch(t, []int{0, 1, 2, 3, 4, 5}, append(pa, pb...), "members share a partition")
	got, _ := a.snapshot()
	gotB, _ := bb.snapshot()
	require.Len(t, filterRound(t, append(got, gotB...), r), len(ids), "a record of round %d delivered twice", r)

	require.NoError(t, ca.Close())
	r++
	ids = round(t, p, keys, r)
	require.Eventually(t, func() bool { return bb.has(t, ids...) }, waitFor, tick,
		"remaining member did not take over every partition")
	require.Equal(t, []int{0, 1, 2, 3, 4, 5}, partitionsOf(t, bb, r))
}

// testFetchBatch: when many records are prefetched, one Fetch returns them
// all at once, up to max.
func testFetchBatch(t *testing.T, k *testinfra.Kafka) {
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	p := b.producer(t)
	msgs := make([]Message, 50)
	for i := range msgs {
		msgs[i] = result(t, "run-1", i)
	}
	require.NoError(t, p.Publish(testCtx(t), msgs...))
	c := b.consumer(t, testinfra.UniqueName(t, "g"), eventsv1.TopicTaskComplete)
	require.Eventually(t, func() bool { return len(c.msgs) == 50 }, waitFor, tick)

	ctx := testCtx(t)
	first, err := c.Fetch(ctx, 10)
	require.NoError(t, err)
	require.Len(t, first, 10, "max bounds the batch")
	rest, err := c.Fetch(ctx, 100)
	require.NoError(t, err)
	require.Len(t, rest, 40, "one Fetch returns every prefetched record")
	for i, m := range append(first, rest...) {
		require.Equal(t, i, attempt(t, m))
	}
}

// testClosed: methods of closed producers and consumers return ErrClosed,
// a Fetch blocked in another goroutine is released, Close runs twice.
func testClosed(t *testing.T, k *testinfra.Kafka) {
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	p, err := NewProducer(b.cfg)
	require.NoError(t, err)
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	require.ErrorIs(t, p.Publish(testCtx(t), result(t, "r", 1)), ErrClosed)

	c, err := NewConsumer(t.Context(), b.cfg, testinfra.UniqueName(t, "g"), eventsv1.TopicTaskComplete)
	require.NoError(t, err)
	fetched := make(chan error, 1)
	go func() { _, err := c.Fetch(testCtx(t), 1); fetched <- err }()
	require.NoError(t, c.Close())
	require.ErrorIs(t, <-fetched, ErrClosed)
	require.NoError(t, c.Close())
	_, err = c.Fetch(testCtx(t), 1)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, c.Commit(testCtx(t), Message{raw: kafka.Message{Topic: "x"}}), ErrClosed)
	err = c.Commit(testCtx(t), Message{Topic: "x"})
	require.Error(t, err)
	require.False(t, errors.Is(err, ErrClosed), "a message not fetched is refused first: %v", err)
}

// testConsumerNeedsTopic: NewConsumer refuses a topic that does not exist
// (kafka-go would join with no partitions and never consume it).
func testConsumerNeedsTopic(t *testing.T, k *testinfra.Kafka) {
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	_, err := NewConsumer(t.Context(), b.cfg, testinfra.UniqueName(t, "g"), eventsv1.TopicTaskComplete, eventsv1.TopicTaskDispatch)
	require.ErrorContains(t, err, "do not exist (run EnsureTopics first)")
	require.ErrorContains(t, err, b.cfg.topic(eventsv1.TopicTaskDispatch))
	require.NotContains(t, err.Error(), b.cfg.topic(eventsv1.TopicTaskComplete)+" ")
}

// testManySmallRecords publishes, in one call and to one partition, more
// small records with headers than fit in one broker request (as an
// orchestrator dispatching a 10,000-node fan-out does): the producer must
// split them by their full size, headers and framing included.
func testManySmallRecords(t *testing.T, k *testinfra.Kafka) {
	b := newBus(t, k, eventsv1.TopicTaskDispatch)
	p := b.producer(t)
	const n = 12000
	msgs := make([]Message, n)
	for i := range msgs {
		m, err := NewMessage(eventsv1.TopicTaskDispatch, "run-0123456789abcdef0123456789abcdef", &eventsv1.TaskDispatch{
			RunId: "run-0123456789abcdef0123456789abcdef", NodeId: "n" + strconv.Itoa(i), Attempt: 1, Handler: "noop",
			IdempotencyKey: "run-0123456789abcdef0123456789abcdef/n" + strconv.Itoa(i) + "/0/1",
		})
		require.NoError(t, err)
		msgs[i] = m
	}
	require.NoError(t, p.Publish(testCtx(t), msgs...))
}
