package testinfra

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// StartKafkaCluster starts a kfake cluster of brokers brokers, each on its
// own free 127.0.0.1 port, otherwise as StartKafka (opts override the
// defaults). kfake keeps one copy of the data for the whole cluster, so a
// broker stopped with StopBroker loses nothing; its metadata reports each
// topic's replication factor (at most the live brokers) and every replica
// always in sync. Node brokers-1 is the controller (kfake's choice, which
// it never moves), so StopBroker refuses it.
func StartKafkaCluster(t testing.TB, brokers int, opts ...kfake.Opt) *Kafka {
	t.Helper()
	if brokers < 1 {
		t.Fatalf("start kfake cluster: %d brokers", brokers)
	}
	return StartKafka(t, append([]kfake.Opt{kfake.NumBrokers(brokers)}, opts...)...)
}

// Controller is the node id of the cluster's controller, the broker that
// creates topics: kfake makes the last broker of a new cluster the
// controller and never moves it.
func (k *Kafka) Controller() int32 { return int32(len(k.Addrs) - 1) }

// StopBroker kills broker node as a crashed broker process would die: its
// listener closes (kfake's RemoveNode, which also elects a new leader for
// every partition among the brokers left and rehashes the group
// coordinators over them) and every connection it had accepted is closed,
// so clients see resets and then refused connections. It refuses the
// controller: kfake does not elect another, so CreateTopics would fail
// until the cluster is restarted, even after StartBroker.
func (k *Kafka) StopBroker(t testing.TB, node int32) {
	t.Helper()
	if node == k.Controller() {
		t.Fatalf("stop broker %d: it is kfake's controller, which kfake never moves", node)
	}
	if err := k.Cluster.RemoveNode(node); err != nil {
		t.Fatalf("stop broker %d: %v", node, err)
	}
	k.conns.Drop(k.Addrs[node])
}

// StartBroker starts broker node again on its old port (kfake's AddNode,
// which again elects a leader for every partition among all the brokers),
// retrying the bind for up to rebindTimeout.
func (k *Kafka) StartBroker(t testing.TB, node int32) {
	t.Helper()
	deadline := time.Now().Add(rebindTimeout)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		_, _, err := k.Cluster.AddNode(node, k.ports[node])
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("start broker %d on %s: %v", node, k.Addrs[node], err)
		}
		<-tick.C
	}
}
