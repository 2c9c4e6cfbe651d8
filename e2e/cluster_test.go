package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The scale-out path: the same separate-process stack — api, two
// orchestrators, two workers — on a Redis Cluster of three masters, each
// with a replica (redis-server in cluster mode on loopback ports), and a
// Kafka cluster of three brokers (kfake, in its own process: topics get
// three replicas and min.insync.replicas 2, as on a real cluster, though
// kfake keeps one copy of the data).

// startClusterStack starts the stack on a fresh 3+3 Redis Cluster and a
// 3-broker Kafka cluster.
func startClusterStack(t *testing.T) *faultStack {
	t.Helper()
	return startFaultStack(t, stackOpts{redisCluster: true, brokers: 3, orchestrators: 2, workers: 2,
		env: []string{"BRAID_RECONCILE_EVERY=1s"}})
}

// TestClusterSeeds: the seeds' example workflows run unchanged on a Redis
// Cluster, and a wave of 50-node DAG runs keeps every invariant the fault
// checker knows (nothing lost, no completed node run twice, the events and
// dispatches agree with the stored state).
func TestClusterSeeds(t *testing.T) {
	t.Parallel()
	f := startClusterStack(t)
	c := f.client(t)
	for _, seed := range []struct{ file, input string }{
		{"seed-000-example-workflow.json", `{}`},
		{"seed-002-order-processing.json", `{"order_id":"order-1"}`},
		{"seed-004-fan-out-fan-in.json", `{}`},
	} {
		name, _ := c.register(readExample(t, seed.file))
		r := c.waitDone(c.start(name, seed.input), 90*time.Second)
		ok := r.Status == "succeeded" || (seed.file == "seed-002-order-processing.json" && r.Status == "failed" && r.node(t, "charge").Attempt == 3)
		require.True(t, ok, "%s ended %s: %s", seed.file, r.Status, r.Error)
	}
	wf := f.register(c, "cluster", layered(50, 10, 5*time.Millisecond))
	ids := startRuns(c, wf, scale(20, 200))
	f.checkInvariants(ids, 2*time.Minute).requireAllSucceeded(t)

	// The run list reads the global indexes across the cluster.
	var page struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	c.call(http.MethodGet, "/runs?workflow="+wf+"&limit=500", nil, http.StatusOK, &page)
	listed := make([]string, len(page.Items))
	for i, it := range page.Items {
		listed[i] = it.ID
	}
	require.ElementsMatch(t, ids, listed)
}

// TestClusterMasterFailover SIGKILLs Redis masters, one at a time, while
// runs are in flight; each master's replica is promoted. The writes a
// master acknowledged but had not yet replicated can be lost with it — as
// with one redis-server's last second of AOF — and the system must
// converge all the same: every accepted run ends succeeded, nothing lost,
// no completed node executed again.
func TestClusterMasterFailover(t *testing.T) {
	t.Parallel()
	f := startClusterStack(t)
	c := f.client(t)
	wf := f.register(c, "failover", layered(50, 10, 20*time.Millisecond))
	ids := startRuns(c, wf, scale(20, 200))
	rnd := faultRand(t)
	for i := range scale(1, 2) {
		f.hold(between(rnd, 300*time.Millisecond, 1500*time.Millisecond))
		t.Logf("killing master %d with %d runs active", i, f.activeRuns())
		killed := f.cluster.KillMaster(t, i)
		t.Logf("fault: SIGKILL redis master %s; its replica took over", killed)
		ids = append(ids, f.startWhenAccepted(c, wf, 1)...)
	}
	f.checkInvariants(ids, 2*time.Minute).requireAllSucceeded(t)
}

// TestClusterBrokerLoss stops a Kafka broker (its listener and every
// connection it accepted closed; its partitions get new leaders) while
// runs are in flight, and starts it again later: producers re-send to the
// new leaders, consumer groups follow their coordinator, and every
// accepted run ends succeeded with nothing lost or executed twice.
func TestClusterBrokerLoss(t *testing.T) {
	t.Parallel()
	f := startClusterStack(t)
	c := f.client(t)
	wf := f.register(c, "brokerloss", layered(50, 10, 20*time.Millisecond))
	ids := startRuns(c, wf, scale(20, 200))
	rnd := faultRand(t)
	for range scale(1, 3) {
		f.hold(between(rnd, 300*time.Millisecond, 1500*time.Millisecond))
		t.Logf("stopping broker 0 with %d runs active", f.activeRuns())
		f.toggleBroker(false)
		ids = append(ids, f.startWhenAccepted(c, wf, 1)...)
		f.hold(between(rnd, 2*time.Second, 5*time.Second))
		f.toggleBroker(true)
	}
	f.checkInvariants(ids, 2*time.Minute).requireAllSucceeded(t)
}
