package eventbus

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

// TestEnsureTopicsReplication: on three brokers new topics and their DLQs
// get three replicas per partition and min.insync.replicas=2; on one
// broker one replica and the broker's default; an explicit factor is kept
// as given.
func TestEnsureTopicsReplication(t *testing.T) {
	t.Parallel()
	three := testinfra.StartKafkaCluster(t, 3)
	one := testinfra.StartKafka(t)
	tests := []struct {
		name       string
		kafka      *testinfra.Kafka
		factor     int
		wantEach   int
		wantInsync string
	}{
		{"three brokers", three, 0, 3, "2"},
		{"one broker", one, 0, 1, "1"},
		{"explicit two on three brokers", three, 2, 2, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newBus(t, tt.kafka)
			b.cfg.ReplicationFactor = tt.factor
			require.NoError(t, EnsureTopics(testCtx(t), b.cfg, eventsv1.TopicTaskDispatch))
			for _, topic := range []string{eventsv1.TopicTaskDispatch, eventsv1.DLQ(eventsv1.TopicTaskDispatch)} {
				wire := b.cfg.topic(topic)
				got := replicasOf(t, tt.kafka, wire)
				require.Len(t, got, DefaultPartitions, wire)
				for p, n := range got {
					require.Equal(t, tt.wantEach, n, "replicas of %s/%d", wire, p)
				}
				require.Equal(t, tt.wantInsync, topicSetting(t, tt.kafka, wire, minInsyncConfig), wire)
			}
		})
	}
}

// TestEnsureTopicsLeavesExistingTopics: a topic created with one replica
// on a three-broker cluster keeps it; EnsureTopics logs what it has and
// warns that new topics get more, and still creates the missing DLQ with
// three.
func TestEnsureTopicsLeavesExistingTopics(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafkaCluster(t, 3)
	b := newBus(t, k)
	var logs bytes.Buffer
	b.cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	wire := b.cfg.topic(eventsv1.TopicTaskDispatch)
	resp, err := adminOf(t, k).CreateTopics(testCtx(t), &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: wire, NumPartitions: 2, ReplicationFactor: 1},
	}})
	require.NoError(t, err)
	require.NoError(t, resp.Errors[wire])

	require.NoError(t, EnsureTopics(testCtx(t), b.cfg, eventsv1.TopicTaskDispatch))
	require.Equal(t, []int{1, 1}, replicasOf(t, k, wire))
	dlq := replicasOf(t, k, b.cfg.topic(eventsv1.DLQ(eventsv1.TopicTaskDispatch)))
	require.Equal(t, []int{3, 3, 3, 3, 3, 3}, dlq)
	out := logs.String()
	require.Contains(t, out, "topics exist; left as they are")
	require.Contains(t, out, wire+"(partitions=2 replicas=1)")
	require.Contains(t, out, "level=WARN msg=\"topic exists with fewer replicas than new topics get; left as it is\" topic="+wire)
	require.Contains(t, out, "msg=\"topics created\"")
}
