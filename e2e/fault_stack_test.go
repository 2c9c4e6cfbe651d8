package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// faultStack is a process stack whose infrastructure runs as processes the
// test can hurt one at a time: a redis-server (AOF, appendfsync everysec)
// and a kfakebroker persisting to a data directory. Orchestrators and
// workers can be killed, stopped, continued and restarted by PID with their
// original environment.
type faultStack struct {
	*Stack
	t *testing.T
	// redis is the stack's redis-server, or nil when it runs on a Redis
	// Cluster (cluster).
	redis   *testinfra.Redis
	cluster *testinfra.RedisCluster
	broker  *proc
	rdb     redis.UniversalClient
	keys    statestore.Keys
	// parents maps workflow name → node id → parent ids, and rules the same
	// to trigger rules ("" for the default), for the checker.
	parents map[string]map[string][]string
	rules   map[string]map[string]string
	// handlers maps workflow name → node id → handler, and ledger is the
	// file where the workers' simulate handler records each execution
	// (BRAID_WORKER_LEDGER), for checkLedger.
	handlers map[string]map[string]string
	ledger   string
	// pausedPIDs are the processes the test SIGSTOPped: their claims lapse
	// while they sleep, so another worker may legitimately run their
	// attempt at the same time.
	pausedPIDs map[int]bool
}

// startFaultStack starts redis-server, the broker and a stack on them; all
// of it is stopped on t.Cleanup (services first, infrastructure last), and
// the logs are dumped if t failed.
func startFaultStack(t *testing.T, o stackOpts) *faultStack {
	t.Helper()
	f := &faultStack{t: t, parents: map[string]map[string][]string{}, rules: map[string]map[string]string{},
		handlers: map[string]map[string]string{}, pausedPIDs: map[int]bool{}}
	if o.redisCluster {
		f.cluster = testinfra.StartRedisCluster(t)
		o.redisURL, f.rdb = f.cluster.URL, f.cluster.Client(t)
	} else {
		f.redis = testinfra.StartRedis(t)
		o.redisURL, f.rdb = f.redis.URL, f.redis.Client(t)
	}
	dir := t.TempDir()
	args := []string{"-addr", freeAddr(t), "-data-dir", filepath.Join(dir, "kafka")}
	if o.brokers > 1 {
		args = []string{"-addr", "127.0.0.1:0", "-brokers", strconv.Itoa(o.brokers), "-data-dir", filepath.Join(dir, "kafka")}
	}
	broker := startProc(t, dir, "kfakebroker", bins(t).KfakeBroker, nil, args...)
	t.Cleanup(func() {
		dumpLogs(t, broker)
		_ = broker.stop(procStopTimeout)
	})
	var addr string
	err := poll(infraTimeout, func() (bool, error) {
		if broker.exited() {
			return false, errExited(broker)
		}
		addr = exports(broker.log())["BRAID_KAFKA_BROKERS"]
		return addr != "", nil
	})
	if err != nil {
		t.Fatalf("kfakebroker: %v\n%s", err, broker.tail())
	}
	o.kafka = addr
	f.ledger = filepath.Join(dir, "ledger.tsv")
	o.env = append([]string{"BRAID_WORKER_LEDGER=" + f.ledger}, o.env...)
	s, stop := StartStack(t, o)
	t.Cleanup(stop)
	s.dumpOnFailure(t)
	f.Stack, f.broker, f.keys = s, broker, statestore.Keys{Namespace: s.Namespace}
	if o.redisCluster {
		f.keys.Shards = statestore.DefaultClusterIndexShards // the services' default on a cluster URL
	}
	return f
}

// kill SIGKILLs p; restart starts it again with its environment.
func (f *faultStack) kill(p *proc) {
	f.t.Helper()
	f.t.Logf("fault: SIGKILL %s pid=%d", p.name, p.pid())
	p.kill()
}

// restart starts p again, with env added to its environment (see
// proc.restart).
func (f *faultStack) restart(p *proc, env ...string) {
	f.t.Helper()
	if err := p.restart(env...); err != nil {
		f.t.Fatal(err)
	}
	f.t.Logf("fault: restarted %s pid=%d", p.name, p.pid())
}

// pause SIGSTOPs p; resume SIGCONTs it.
func (f *faultStack) pause(p *proc) {
	f.t.Helper()
	f.t.Logf("fault: SIGSTOP %s pid=%d", p.name, p.pid())
	f.pausedPIDs[p.pid()] = true
	if err := p.signal(syscall.SIGSTOP); err != nil {
		f.t.Fatal(err)
	}
}

func (f *faultStack) resume(p *proc) {
	f.t.Helper()
	f.t.Logf("fault: SIGCONT %s pid=%d", p.name, p.pid())
	if err := p.signal(syscall.SIGCONT); err != nil {
		f.t.Fatal(err)
	}
}

// killRedis SIGKILLs redis-server (writes of the last second may be lost);
// restartRedis starts it on the same port from its append-only file.
func (f *faultStack) killRedis() {
	f.t.Logf("fault: SIGKILL redis-server %s", f.redis.Addr)
	f.redis.Kill()
}

// toggleBroker stops broker 0 of a multi-broker kfakebroker (its listener
// and connections closed, new leaders elected among the others), or starts
// it again (SIGUSR2 toggles it), and waits until the broker says it did.
func (f *faultStack) toggleBroker(up bool) {
	f.t.Helper()
	want := fmt.Sprintf("up=%t", up)
	before := strings.Count(f.broker.log(), want)
	require.NoError(f.t, f.broker.signal(syscall.SIGUSR2))
	require.NoError(f.t, poll(10*time.Second, func() (bool, error) { return strings.Count(f.broker.log(), want) > before, nil }),
		"kfakebroker did not toggle broker 0: %s", f.broker.tail())
	f.t.Logf("fault: kafka broker 0 %s", map[bool]string{true: "started again", false: "stopped"}[up])
}

func (f *faultStack) restartRedis() {
	f.redis.Restart(f.t)
	f.t.Logf("fault: restarted redis-server %s", f.redis.Addr)
}

// hold keeps a fault in place for d (the fault's length, not a
// synchronisation): it fails the test if a process outside hurt exits
// meanwhile.
func (f *faultStack) hold(d time.Duration, hurt ...*proc) {
	f.t.Helper()
	skip := map[*proc]bool{}
	for _, p := range hurt {
		skip[p] = true
	}
	end := time.NewTimer(d)
	defer end.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		for _, p := range append(f.procs, f.broker) {
			if !skip[p] && p.exited() {
				f.t.Fatalf("during a fault window: %v", errExited(p))
			}
		}
		select {
		case <-end.C:
			return
		case <-tick.C:
		}
	}
}

// ctx returns a context bounded by d for direct Redis or Kafka reads.
func (f *faultStack) ctx(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	f.t.Cleanup(cancel)
	return ctx
}

// activeRuns counts the runs in the active index, every shard (for the log).
func (f *faultStack) activeRuns() int64 {
	var n int64
	for _, key := range f.keys.ActiveRunShards() {
		c, err := f.rdb.ZCard(f.ctx(5*time.Second), key).Result()
		if err != nil {
			return -1
		}
		n += c
	}
	return n
}

// waitJoined waits until p, since its last (re)start, has joined its
// consumer group: kafka-go logs "Joined group" (at debug, the stack's
// level) once it received the coordinator's JoinGroup answer. kfake never
// expires a member whose JoinGroup answer it could not deliver (its
// process was killed mid-join) once the rest of the group has synced: that
// member's partitions stay assigned to nobody until the group's next
// membership change, where real Kafka would expire it after its session
// timeout. The kill loops therefore hurt a process only once it has
// joined, which still kills it at a random moment of its work.
func (f *faultStack) waitJoined(p *proc) {
	f.t.Helper()
	err := poll(60*time.Second, func() (bool, error) {
		if p.exited() {
			return false, errExited(p)
		}
		return hasJoined(p), nil
	})
	require.NoError(f.t, err, "%s pid=%d never joined its consumer group", p.name, p.pid())
}
