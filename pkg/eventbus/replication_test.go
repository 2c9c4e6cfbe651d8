package eventbus

import (
	"testing"

	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

// TestReplicationFor: automatic replication follows the broker count up to
// three replicas with two in sync; an explicit factor is kept as given.
func TestReplicationFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		factor  int
		brokers int
		want    replication
	}{
		{"auto, metadata lists no broker", 0, 0, replication{factor: 1}},
		{"auto, one broker", 0, 1, replication{factor: 1}},
		{"auto, two brokers", 0, 2, replication{factor: 2, minInsync: 1}},
		{"auto, three brokers", 0, 3, replication{factor: 3, minInsync: 2}},
		{"auto, five brokers", 0, 5, replication{factor: 3, minInsync: 2}},
		{"explicit one on three brokers", 1, 3, replication{factor: 1}},
		{"explicit two on five brokers", 2, 5, replication{factor: 2}},
		{"explicit three on one broker (the broker refuses)", 3, 1, replication{factor: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, replicationFor(tt.factor, tt.brokers))
		})
	}
}

// TestTopicConfig sets min.insync.replicas only when one was chosen.
func TestTopicConfig(t *testing.T) {
	t.Parallel()
	require.Equal(t, kafka.TopicConfig{Topic: "t", NumPartitions: 6, ReplicationFactor: 3,
		ConfigEntries: []kafka.ConfigEntry{{ConfigName: "min.insync.replicas", ConfigValue: "2"}}},
		replication{factor: 3, minInsync: 2}.topicConfig("t", 6))
	require.Equal(t, kafka.TopicConfig{Topic: "t", NumPartitions: 6, ReplicationFactor: 1},
		replication{factor: 1}.topicConfig("t", 6))
}
