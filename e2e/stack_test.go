package e2e

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/procstack"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
)

// Bounds on starting a stack.
const (
	infraTimeout = 30 * time.Second // braid dev --only infra prints its addresses
	readyTimeout = 60 * time.Second // api /readyz and every worker listed
)

// Stack is Braid running as separate OS processes: broker and Redis (from
// `braid dev --only infra`, or given), the api, an orchestrator and N
// workers, each started from its binary with BRAID_* environment variables
// and a unique topic prefix and Redis namespace. Tests drive it over HTTP.
type Stack struct {
	// URL is the api's base URL.
	URL string
	// Key is a write API key; ReadKey a read-only one.
	Key, ReadKey string
	// Workers are the worker ids.
	Workers []string
	// Dir holds the processes' logs (and the infra's data).
	Dir string
	// Kafka, RedisURL, TopicPrefix and Namespace are where the stack keeps
	// its topics and keys (for checks that read them directly).
	Kafka, RedisURL, TopicPrefix, Namespace string

	bins  binaries
	env   []string
	procs []*proc
	// id names the stack's processes; opts is how it was started.
	id   string
	opts stackOpts
	// orchs and workerProcs are the orchestrator and worker processes, in
	// start order (also in procs), for fault injection.
	orchs, workerProcs []*proc
	logf               func(format string, args ...any) // where stop reports trouble
}

// stackOpts configures StartStack.
type stackOpts struct {
	// workers is the number of worker processes; default 2.
	workers int
	// orchestrators is the number of orchestrator processes; default 1.
	orchestrators int
	// redisCluster (startFaultStack only) runs the stack on a 3-master,
	// 3-replica Redis Cluster instead of one redis-server.
	redisCluster bool
	// brokers (startFaultStack only) is the number of Kafka brokers the
	// kfakebroker process runs; default 1.
	brokers int
	// kafka and redisURL point at existing infrastructure; when empty the
	// stack runs `braid dev --only infra` on free ports, or uses the test
	// process's containers (BRAID_E2E_INFRA=containers).
	kafka, redisURL string
	// orchEnv, when set, adds to orchestrator i's environment (0-based).
	orchEnv func(i int) []string
	// orchBin, when set and not "", is the binary orchestrator i runs
	// instead of the normal build (a failpoints build); workerBin the same
	// for worker i.
	orchBin, workerBin func(i int) string
	// apiBin, when not "", is the binary the api runs.
	apiBin string
	// workerEnv, when set, adds to worker i's environment (0-based).
	workerEnv func(i int) []string
	// env is added to every service's environment; it overrides the
	// stack's defaults (later duplicates win).
	env []string
}

// StartStack builds the binaries (once), starts the processes and waits
// until the api is ready and lists every worker. It returns the stack and a
// stop func (SIGTERM each process by PID, SIGKILL after a bound; api first,
// infrastructure last). The caller must call stop.
func StartStack(t testing.TB, o stackOpts) (*Stack, func()) {
	t.Helper()
	if o.kafka == "" && containerMode(t) {
		o.kafka, o.redisURL = containerInfra(t)
	}
	s := &Stack{bins: bins(t), Key: "w" + randomHex(t, 16), ReadKey: "r" + randomHex(t, 16), logf: t.Logf}
	dir, err := os.MkdirTemp("", "braid-e2e-stack-")
	if err != nil {
		t.Fatalf("stack dir: %v", err)
	}
	s.Dir = dir
	stop := func() {
		s.stop()
		if t.Failed() {
			t.Logf("stack logs kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	}
	if o.kafka == "" {
		o.kafka, o.redisURL = s.startInfra(t)
	}
	id := fmt.Sprintf("e2e%d%s", os.Getpid(), randomHex(t, 3))
	apiAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(testinfra.FreePort(t)))
	s.URL = "http://" + apiAddr
	s.Kafka, s.RedisURL, s.TopicPrefix, s.Namespace = o.kafka, o.redisURL, id+".", id+":"
	s.env = append([]string{
		"BRAID_KAFKA_BROKERS=" + o.kafka, "BRAID_REDIS_URL=" + o.redisURL,
		"BRAID_KAFKA_TOPIC_PREFIX=" + s.TopicPrefix, "BRAID_REDIS_NAMESPACE=" + s.Namespace,
		"BRAID_LOG_LEVEL=debug",
	}, o.env...)
	for i := range max(o.orchestrators, 1) {
		name, oid := "orchestrator", id+"-orch"
		if i > 0 {
			name, oid = fmt.Sprintf("orchestrator-%d", i+1), fmt.Sprintf("%s-orch-%d", id, i+1)
		}
		env := append(slices.Clone(s.env), "BRAID_ORCHESTRATOR_ID="+oid)
		if o.orchEnv != nil {
			env = append(env, o.orchEnv(i)...)
		}
		bin := s.bins.Orchestrator
		if o.orchBin != nil {
			bin = cmp.Or(o.orchBin(i), bin)
		}
		s.orchs = append(s.orchs, startProc(t, dir, name, bin, env))
	}
	s.id, s.opts = id, o
	for range max(o.workers, 1) {
		s.newWorker(t)
	}
	s.procs = append(append(s.procs, s.orchs...), s.workerProcs...)
	s.procs = append(s.procs, startProc(t, dir, "api", cmp.Or(o.apiBin, s.bins.API), append(s.env, "BRAID_API_ADDR="+apiAddr,
		"BRAID_API_KEYS=e2e:"+s.Key+":write,e2e-read:"+s.ReadKey+":read")))
	if err := s.waitReady(); err != nil {
		s.dump(t)
		stop()
		t.Fatalf("stack not ready: %v", err)
	}
	return s, stop
}

// newWorker starts worker process number len(s.Workers)+1 (stable id
// <stack>-worker-N) and records it in Workers and workerProcs.
func (s *Stack) newWorker(t testing.TB) *proc {
	i := len(s.Workers)
	wid := fmt.Sprintf("%s-worker-%d", s.id, i+1)
	env := append(append([]string{"BRAID_WORKER_CONCURRENCY=4", "BRAID_WORKER_DRAIN_TIMEOUT=5s"}, s.env...), "BRAID_WORKER_ID="+wid)
	if s.opts.workerEnv != nil {
		env = append(env, s.opts.workerEnv(i)...)
	}
	bin := s.bins.Worker
	if s.opts.workerBin != nil {
		bin = cmp.Or(s.opts.workerBin(i), bin)
	}
	p := startProc(t, s.Dir, "worker-"+strconv.Itoa(i+1), bin, env)
	s.Workers = append(s.Workers, wid)
	s.workerProcs = append(s.workerProcs, p)
	return p
}

// addWorker starts one more worker on a running stack (stopped with it).
func (s *Stack) addWorker(t testing.TB) *proc {
	p := s.newWorker(t)
	s.procs = append(s.procs, p)
	return p
}

// startInfra runs `braid dev --only infra` on free ports and returns the
// broker list and Redis URL it prints.
func (s *Stack) startInfra(t testing.TB) (kafka, redisURL string) {
	t.Helper()
	in, err := procstack.StartInfra(procstack.InfraConfig{Braid: s.bins.Braid, Dir: s.Dir,
		KafkaAddr: freeAddr(t), RedisAddr: freeAddr(t), Timeout: infraTimeout})
	if err != nil {
		t.Fatal(err)
	}
	s.procs = append(s.procs, newProc(in.Proc()))
	return in.Kafka, in.RedisURL
}

// exports parses "export NAME=value" lines.
func exports(out string) map[string]string { return procstack.Exports(out) }

// waitReady waits for /readyz and for every worker in GET /workers, failing
// early when a process exits.
func (s *Stack) waitReady() error {
	c := s.client(nil)
	return poll(readyTimeout, func() (bool, error) {
		for _, p := range s.procs {
			if p.exited() {
				return false, errExited(p)
			}
		}
		return c.ready(s.Workers), nil
	})
}

// pollEvery is the interval of poll.
const pollEvery = 50 * time.Millisecond

// poll calls cond every pollEvery until it returns true (nil), an error
// (that error) or timeout passes.
func poll(timeout time.Duration, cond func() (bool, error)) error {
	return procstack.Poll(timeout, pollEvery, cond)
}

// stop stops the processes in reverse start order (api first, infra last).
func (s *Stack) stop() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i]
		if err := p.stop(procStopTimeout); err != nil {
			s.logf("stop %s: %v\n%s", p.name, err, p.tail())
		}
	}
}

// dump logs every process's output tail (on failure).
func (s *Stack) dump(t testing.TB) {
	for _, p := range s.procs {
		t.Logf("==== %s (pid %d, exited %v) log %s ====\n%s", p.name, p.pid(), p.exited(), p.logPath, p.tail())
	}
}

// dumpOnFailure registers a cleanup that dumps the logs if t fails.
func (s *Stack) dumpOnFailure(t testing.TB) {
	t.Cleanup(func() {
		if t.Failed() {
			s.dump(t)
		}
	})
}

// freeAddr is 127.0.0.1:<free port>.
func freeAddr(t testing.TB) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(testinfra.FreePort(t)))
}

// waitOpsReady waits until each ops listener (an orchestrator's metrics
// address, a worker's HTTP address) answers GET /readyz with 200. A stack
// is ready once the api and the workers are; an orchestrator binds its
// listener only after it has joined its consumer group, so a test reading
// it right away could find nothing listening yet.
func waitOpsReady(t testing.TB, addrs ...string) {
	t.Helper()
	hc := &http.Client{Timeout: httpTimeout}
	for _, addr := range addrs {
		err := poll(readyTimeout, func() (bool, error) {
			resp, err := hc.Get("http://" + addr + "/readyz")
			if err != nil {
				return false, nil // not listening yet: poll again
			}
			_ = resp.Body.Close()
			return resp.StatusCode == http.StatusOK, nil
		})
		if err != nil {
			t.Fatalf("%s/readyz: %v", addr, err)
		}
	}
}

// randomHex returns n random bytes as hex.
func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("random: %v", err)
	}
	return hex.EncodeToString(b)
}
