package stack

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/devinfra/rediscluster"
	"github.com/braidhq/braid/pkg/testkit/procstack"
)

// Setups name the infrastructure a bench runs on, in its lines.
const (
	// SetupSingle is one kfake broker and one redis-server, run by
	// `braid dev --only infra`.
	SetupSingle = "single"
	// SetupCluster is a Redis Cluster and a kfake cluster of
	// ClusterBrokers brokers, each in its own processes.
	SetupCluster = "cluster"
)

// Shape of the cluster setup.
const (
	ClusterMasters  = 3 // Redis masters, each with ClusterReplicas replicas
	ClusterReplicas = 1
	ClusterBrokers  = 3 // kfake brokers of the kfakebroker process
	// clusterNodeTimeout is the Redis nodes' cluster-node-timeout: longer
	// than the tests' 1 s, so a node starved of CPU by the load on two
	// cores is not failed over in the middle of a measurement.
	clusterNodeTimeout = 5 * time.Second
	brokerStartTimeout = 30 * time.Second // until kfakebroker prints its addresses
	logTail            = 4 << 10          // of a log, in a start error
)

// KfakeBrokerPackage is the kfakebroker program, for procstack.Build's
// extra packages; StartCluster runs it from Binaries.Dir.
const KfakeBrokerPackage = "./e2e/internal/cmd/kfakebroker"

// Infra is the broker(s) and Redis the services of a bench run on, with
// the processes that run them (for their CPU time).
type Infra struct {
	// Setup is SetupSingle or SetupCluster.
	Setup string
	// Brokers is BRAID_KAFKA_BROKERS: one address, or several
	// comma-separated; RedisURL is BRAID_REDIS_URL.
	Brokers, RedisURL string

	kafkaPIDs func() []int
	redisPIDs func() []int
	stop      func() error
}

// BrokerList is Brokers split at the commas.
func (i *Infra) BrokerList() []string { return strings.Split(i.Brokers, ",") }

// KafkaPIDs are the processes that run the brokers. In the single setup
// that is the `braid dev --only infra` process, which runs kfake inside
// itself next to supervising redis-server.
func (i *Infra) KafkaPIDs() []int { return i.kafkaPIDs() }

// RedisPIDs are the redis-server processes: one, or every node of the
// cluster (masters and replicas).
func (i *Infra) RedisPIDs() []int { return i.redisPIDs() }

// Stop stops the infrastructure: brokers, then Redis.
func (i *Infra) Stop() error { return i.stop() }

// StartSingle starts kfake (with a data dir) and redis-server (AOF,
// appendfsync everysec) with `braid dev --only infra`, logging under dir.
func StartSingle(bins procstack.Binaries, dir string) (*Infra, error) {
	in, err := procstack.StartInfra(procstack.InfraConfig{Braid: bins.Braid, Dir: dir})
	if err != nil {
		return nil, err
	}
	p := in.Proc()
	return &Infra{Setup: SetupSingle, Brokers: in.Kafka, RedisURL: in.RedisURL,
		kafkaPIDs: func() []int { return []int{p.PID()} },
		redisPIDs: func() []int {
			kids, _ := p.Children() // braid dev --only infra has one child: redis-server
			return kids
		},
		stop: in.Stop,
	}, nil
}

// StartCluster starts a Redis Cluster of ClusterMasters masters with
// ClusterReplicas replicas each (rediscluster: redis-server with AOF,
// appendfsync everysec, as in the single setup; no password) and a
// kfakebroker process of ClusterBrokers brokers with a data dir, under
// dir. bins must hold kfakebroker (KfakeBrokerPackage).
func StartCluster(ctx context.Context, bins procstack.Binaries, dir string) (*Infra, error) {
	rc, err := rediscluster.Start(ctx, rediscluster.Config{Dir: filepath.Join(dir, "redis-cluster"),
		Masters: ClusterMasters, ReplicasPerMaster: ClusterReplicas, NodeTimeout: clusterNodeTimeout,
		SysProcAttr: procstack.SysProcAttr()})
	if err != nil {
		return nil, err
	}
	broker, brokers, err := startBrokers(bins, dir)
	if err != nil {
		return nil, errors.Join(err, rc.Stop())
	}
	return &Infra{Setup: SetupCluster, Brokers: brokers, RedisURL: rc.URL,
		kafkaPIDs: func() []int { return []int{broker.PID()} },
		redisPIDs: rc.PIDs,
		stop: func() error {
			return errors.Join(broker.Stop(procstack.StopGrace), rc.Stop())
		},
	}, nil
}

// startBrokers starts kfakebroker with ClusterBrokers brokers on free
// loopback ports and returns it with the addresses it printed.
func startBrokers(bins procstack.Binaries, dir string) (*procstack.Proc, string, error) {
	p, err := procstack.Start(procstack.Spec{Name: "kfakebroker", Bin: filepath.Join(bins.Dir, "kfakebroker"), Dir: dir,
		Args: []string{"-addr", "127.0.0.1:0", "-brokers", strconv.Itoa(ClusterBrokers), "-data-dir", filepath.Join(dir, "kafka")}})
	if err != nil {
		return nil, "", err
	}
	var brokers string
	err = procstack.Poll(brokerStartTimeout, pollEvery, func() (bool, error) {
		if p.Exited() {
			return false, p.ErrExited()
		}
		brokers = procstack.Exports(p.Log())["BRAID_KAFKA_BROKERS"]
		return brokers != "", nil
	})
	if err != nil {
		_ = p.Stop(procstack.StopGrace)
		return nil, "", fmt.Errorf("kfakebroker printed no addresses: %w\n%s", err, p.Tail(logTail))
	}
	return p, brokers, nil
}
