package eventbus

import (
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

// adminOf returns a kafka-go client on every broker of k, on a transport of
// its own that is closed on cleanup.
func adminOf(t *testing.T, k *testinfra.Kafka) *kafka.Client {
	t.Helper()
	tr := &kafka.Transport{MetadataTTL: 50 * time.Millisecond}
	t.Cleanup(tr.CloseIdleConnections)
	return &kafka.Client{Addr: kafka.TCP(k.Addrs...), Transport: tr}
}

// replicasOf returns the replica count of each partition of the wire topic.
func replicasOf(t *testing.T, k *testinfra.Kafka, topic string) []int {
	t.Helper()
	resp, err := adminOf(t, k).Metadata(testCtx(t), &kafka.MetadataRequest{Topics: []string{topic}})
	require.NoError(t, err)
	require.Len(t, resp.Topics, 1)
	require.NoError(t, resp.Topics[0].Error)
	out := make([]int, len(resp.Topics[0].Partitions))
	for _, p := range resp.Topics[0].Partitions {
		out[p.ID] = len(p.Replicas)
	}
	return out
}

// topicSetting returns the value of the wire topic's config name.
func topicSetting(t *testing.T, k *testinfra.Kafka, topic, name string) string {
	t.Helper()
	resp, err := adminOf(t, k).DescribeConfigs(testCtx(t), &kafka.DescribeConfigsRequest{
		Resources: []kafka.DescribeConfigRequestResource{{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic, ConfigNames: []string{name}}},
	})
	require.NoError(t, err)
	require.Len(t, resp.Resources, 1)
	require.NoError(t, resp.Resources[0].Error)
	for _, e := range resp.Resources[0].ConfigEntries {
		if e.ConfigName == name {
			return e.ConfigValue
		}
	}
	t.Fatalf("topic %s has no config %s", topic, name)
	return ""
}

// endOffsets returns the end offset of each partition of the wire topic.
func endOffsets(t *testing.T, k *testinfra.Kafka, topic string, partitions int) map[int]int64 {
	t.Helper()
	reqs := make([]kafka.OffsetRequest, partitions)
	for i := range reqs {
		reqs[i] = kafka.LastOffsetOf(i)
	}
	resp, err := adminOf(t, k).ListOffsets(testCtx(t), &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	require.NoError(t, err)
	out := map[int]int64{}
	for _, p := range resp.Topics[topic] {
		require.NoError(t, p.Error)
		out[p.Partition] = p.LastOffset
	}
	return out
}
