// Package devbroker holds the settings of the kfake brokers Braid starts
// itself: `braid dev`, the e2e suite's broker process and pkg/testkit/testinfra.
// They live in one place so every such broker behaves the same way.
package devbroker

import (
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// MinSessionTimeout is the broker's group.min.session.timeout.ms. kfake's
// (and stock Kafka's) default is 6 s, which would hold a killed member's
// partitions for 6 s; Braid's consumers ask for 3 s (eventbus
// DefaultSessionTimeout), so a restarted orchestrator resumes within a few
// seconds.
const MinSessionTimeout = time.Second

// Options returns the kfake options of a one-broker cluster persisting to
// dataDir and creating topics with partitions partitions. Callers add how
// it listens, and kfake.NumBrokers or kfake.Ports after these for a
// cluster of several brokers (testinfra.StartKafkaCluster, kfakebroker
// -brokers).
func Options(dataDir string, partitions int) []kfake.Opt {
	return []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.DataDir(dataDir),
		kfake.DefaultNumPartitions(partitions),
		// Set as a broker config (not kfake.GroupMinSessionTimeout) so that
		// DescribeConfigs reports it and eventbus keeps the session it asks for.
		kfake.BrokerConfigs(map[string]string{
			"group.min.session.timeout.ms": strconv.Itoa(int(MinSessionTimeout.Milliseconds())),
		}),
	}
}
