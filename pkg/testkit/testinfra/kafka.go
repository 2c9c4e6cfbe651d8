package testinfra

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/devinfra/devbroker"
	"github.com/twmb/franz-go/pkg/kfake"
)

// kafkaPartitions is the default partition count of topics kfake creates.
const kafkaPartitions = 6

// rebindTimeout bounds retrying to bind the old port on Restart.
const rebindTimeout = 5 * time.Second

// Kafka is a kfake cluster started by StartKafka (one broker) or
// StartKafkaCluster. Addr, Addrs and DataDir stay the same across Stop,
// Restart, StopBroker and StartBroker; Cluster is replaced by Restart.
type Kafka struct {
	// Addr is the first broker's host:port on 127.0.0.1.
	Addr string
	// Addrs lists every broker's host:port, indexed by node id (kfake
	// numbers the brokers of a new cluster 0..n-1).
	Addrs []string
	// Cluster is the running kfake cluster (closed after Stop).
	Cluster *kfake.Cluster
	// DataDir holds the persisted topics, records and group offsets.
	DataDir string

	ports []int
	opts  []kfake.Opt
	conns *devbroker.ConnTracker
}

// StartKafka starts a kfake cluster of one broker on a free 127.0.0.1 port
// (kfake always binds 127.0.0.1; port 0 lets the kernel pick one, so there is
// no race on the port), persisting to a fresh t.TempDir (saved on Stop; pass
// kfake.SyncWrites() to fsync every write, at ~4 ms a produce), six
// partitions per created topic and auto topic creation off. opts
// are applied after these defaults, so they override them (a
// kfake.ListenFn of the caller's own disables StopBroker's closing of
// connections). The cluster is closed on t.Cleanup.
func StartKafka(t testing.TB, opts ...kfake.Opt) *Kafka {
	t.Helper()
	k := &Kafka{DataDir: t.TempDir(), conns: devbroker.NewConnTracker()}
	k.opts = append(devbroker.Options(k.DataDir, kafkaPartitions), kfake.ListenFn(k.conns.Listen))
	k.opts = append(k.opts, opts...)
	c, err := kfake.NewCluster(k.opts...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	devbroker.PrepareSegments(c, k.DataDir, kafkaPartitions)
	k.Cluster = c
	k.Addrs = c.ListenAddrs()
	k.Addr = k.Addrs[0]
	for _, a := range k.Addrs {
		_, port, _ := net.SplitHostPort(a)
		p, _ := strconv.Atoi(port)
		k.ports = append(k.ports, p)
	}
	t.Cleanup(k.Stop)
	return k
}

// Stop closes the cluster, persisting its state to DataDir and dropping every
// client connection, which simulates the broker going down. It is safe to
// call twice.
func (k *Kafka) Stop() {
	if k.Cluster != nil {
		k.Cluster.Close()
	}
}

// Restart stops the cluster if it runs and opens a new one, with every
// broker on its old port, on the same DataDir, retrying the bind for up to
// rebindTimeout.
func (k *Kafka) Restart(t testing.TB) {
	t.Helper()
	k.Stop()
	opts := append(append([]kfake.Opt(nil), k.opts...), kfake.Ports(k.ports...))
	deadline := time.Now().Add(rebindTimeout)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		c, err := kfake.NewCluster(opts...)
		if err == nil {
			devbroker.PrepareSegments(c, k.DataDir, kafkaPartitions)
			k.Cluster = c
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("restart kfake on %v: %v", k.Addrs, err)
		}
		<-tick.C
	}
}
