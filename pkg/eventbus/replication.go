package eventbus

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/segmentio/kafka-go"
)

// Replication of the topics EnsureTopics creates when Config.ReplicationFactor
// is 0 (automatic).
const (
	// AutoReplicationFactor is the replica count of topics created on a
	// cluster whose metadata lists at least that many brokers (fewer
	// brokers: one replica per broker).
	AutoReplicationFactor = 3
	// AutoMinInsyncReplicas is the min.insync.replicas of those topics.
	// With RequireAll a record is acknowledged once two brokers hold it, so
	// one broker can die without losing an acknowledged record and without
	// stopping writes.
	AutoMinInsyncReplicas = 2
)

// minInsyncConfig is the topic config naming how many in-sync replicas a
// RequireAll write needs.
const minInsyncConfig = "min.insync.replicas"

// replication is how EnsureTopics creates topics.
type replication struct {
	// factor is the replica count of each partition.
	factor int
	// minInsync is the topic's min.insync.replicas; 0 leaves the brokers'
	// default.
	minInsync int
}

// replicationFor returns how to replicate new topics given the configured
// factor (0: automatic) and the number of brokers the metadata lists.
// Automatic is AutoReplicationFactor replicas with min.insync.replicas
// AutoMinInsyncReplicas when there are enough brokers; on fewer, one
// replica per broker, of which all but one must be in sync (two brokers:
// 2 and 1), and a single broker gets 1 and the brokers' default. An
// explicit factor is used as given, with the brokers' default
// min.insync.replicas: an operator who set one owns that choice. Pure.
func replicationFor(factor, brokers int) replication {
	if factor > 0 {
		return replication{factor: factor}
	}
	n := min(max(brokers, 1), AutoReplicationFactor)
	if n == 1 {
		return replication{factor: 1}
	}
	return replication{factor: n, minInsync: min(n-1, AutoMinInsyncReplicas)}
}

// topicConfig returns the CreateTopics entry of topic with partitions
// partitions under r.
func (r replication) topicConfig(topic string, partitions int) kafka.TopicConfig {
	tc := kafka.TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: r.factor}
	if r.minInsync > 0 {
		tc.ConfigEntries = []kafka.ConfigEntry{{ConfigName: minInsyncConfig, ConfigValue: strconv.Itoa(r.minInsync)}}
	}
	return tc
}

// replicaCount returns the fewest replicas any partition of t lists.
func replicaCount(t kafka.Topic) int {
	n := -1
	for _, p := range t.Partitions {
		if n < 0 || len(p.Replicas) < n {
			n = len(p.Replicas)
		}
	}
	return max(n, 0)
}

// logExisting logs, once per EnsureTopics, the topics among names that
// exist already and are left as they are: their partition and replica
// counts at Info, and a warning for each with fewer replicas than new
// topics get (an operator who wants it must raise it with Kafka's tools).
func (c Config) logExisting(meta *kafka.MetadataResponse, names []string, r replication) {
	if c.Logger == nil {
		return
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var have []string
	for _, t := range meta.Topics {
		if !want[t.Name] || t.Error != nil || len(t.Partitions) == 0 {
			continue
		}
		rf := replicaCount(t)
		have = append(have, fmt.Sprintf("%s(partitions=%d replicas=%d)", t.Name, len(t.Partitions), rf))
		if rf < r.factor {
			c.Logger.Warn("topic exists with fewer replicas than new topics get; left as it is",
				logkey.Topic, t.Name, logkey.Replicas, rf, logkey.Brokers, len(meta.Brokers), logkey.Detail, fmt.Sprintf("new topics get %d", r.factor))
		}
	}
	if len(have) > 0 {
		c.Logger.Info("topics exist; left as they are", logkey.Topics, strings.Join(have, ", "))
	}
}
