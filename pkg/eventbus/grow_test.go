package eventbus

import (
	"testing"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

// growTopic adds partitions to topic (a logical name) until it has n, as
// an operator does with kafka-topics --alter --partitions.
func growTopic(t *testing.T, b bus, topic string, n int) {
	t.Helper()
	client := &kafka.Client{Addr: kafka.TCP(b.cfg.Brokers...)}
	resp, err := client.CreatePartitions(testCtx(t), &kafka.CreatePartitionsRequest{
		Topics: []kafka.TopicPartitionsConfig{{Name: b.cfg.TopicPrefix + topic, Count: int32(n)}}})
	require.NoError(t, err)
	for topic, err := range resp.Errors {
		require.NoError(t, err, "create partitions of %s", topic)
	}
}

// TestGroupConsumesPartitionsAddedLater: partitions added to a topic while
// a group consumes it are consumed too, within a few seconds (the group
// watches the topic's partition count and rebalances when it changes);
// before, their records waited for the next rebalance, which only a member
// joining or leaving brings — a worker group's dispatches there, and the
// runs behind them, hung.
func TestGroupConsumesPartitionsAddedLater(t *testing.T) {
	t.Parallel()
	b := newBus(t, testinfra.StartKafka(t), eventsv1.TopicTaskComplete)
	c := b.consumer(t, testinfra.UniqueName(t, "g"), eventsv1.TopicTaskComplete)
	col := collect(t, c)
	keys := keysByPartition(t, DefaultPartitions+2)
	publishResults(t, b.producer(t), keys[0], 1)
	require.Eventually(t, func() bool { return col.has(t, keys[0]+"/0") }, waitFor, tick, "the group never consumed")

	growTopic(t, b, eventsv1.TopicTaskComplete, DefaultPartitions+2)
	p := b.producer(t) // a new producer reads the new partition count
	var want []string
	for _, k := range keys[DefaultPartitions:] {
		publishResults(t, p, k, 1)
		want = append(want, k+"/0")
	}
	require.Eventually(t, func() bool { return col.has(t, want...) }, waitFor, tick, "records in the added partitions were not consumed")
}

// TestTailReadsPartitionsAddedLater: a Tail reads the partitions added to
// its topic after it opened, from their first record, within a few
// seconds; before, it read only those it opened with (the api's live run
// events missed every run keyed to an added partition until its feed
// reopened).
func TestTailReadsPartitionsAddedLater(t *testing.T) {
	t.Parallel()
	b := newBus(t, testinfra.StartKafka(t), eventsv1.TopicTaskComplete)
	tail, err := OpenTail(testCtx(t), b.cfg, eventsv1.TopicTaskComplete)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tail.Close()) })
	keys := keysByPartition(t, DefaultPartitions+2)

	growTopic(t, b, eventsv1.TopicTaskComplete, DefaultPartitions+2)
	p := b.producer(t)
	for _, k := range keys[DefaultPartitions:] {
		publishResults(t, p, k, 2)
	}
	publishResults(t, p, keys[0], 1)
	got := map[string]int{}
	for _, m := range fetchN(t, tail, 5) {
		got[string(m.Key)]++
	}
	require.Equal(t, map[string]int{keys[0]: 1, keys[DefaultPartitions]: 2, keys[DefaultPartitions+1]: 2}, got)
}
