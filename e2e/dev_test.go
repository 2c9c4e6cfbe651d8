package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// devReady bounds braid dev's start (broker, Redis, services, /readyz).
const devReady = 90 * time.Second

// devProc is a running braid dev.
type devProc struct {
	*proc
	stack *Stack // URL and Key only, for the HTTP helpers
}

// startDev runs braid dev on dataDir with the given addresses and waits for
// the API; the key is read from <dataDir>/api-key as a user would.
func startDev(t *testing.T, dir, dataDir string, addrs devAddrs, extra ...string) *devProc {
	t.Helper()
	args := append([]string{"dev", "--data-dir", dataDir, "--addr", addrs.api, "--kafka-addr", addrs.kafka,
		"--redis-addr", addrs.redis, "--workers", "1"}, extra...)
	p := startProc(t, dir, "dev-"+randomHex(t, 2), bins(t).Braid, nil, args...)
	t.Cleanup(func() {
		_ = p.stop(procStopTimeout)
		dumpLogs(t, p)
	})
	d := &devProc{proc: p, stack: &Stack{URL: "http://" + addrs.api}}
	err := poll(devReady, func() (bool, error) {
		if p.exited() {
			return false, errExited(p)
		}
		return strings.Contains(p.log(), "Braid dev stack is up."), nil
	})
	require.NoError(t, err, "braid dev did not come up")
	key, err := os.ReadFile(filepath.Join(dataDir, "api-key"))
	require.NoError(t, err)
	d.stack.Key = strings.TrimSpace(string(key))
	return d
}

// devAddrs are the listen addresses of one braid dev.
type devAddrs struct{ api, kafka, redis string }

func freeDevAddrs(t *testing.T) devAddrs {
	return devAddrs{api: freeAddr(t), kafka: freeAddr(t), redis: freeAddr(t)}
}

func TestDevRestartKeepsState(t *testing.T) {
	t.Parallel()
	dir, dataDir, addrs := t.TempDir(), filepath.Join(t.TempDir(), ".braid"), freeDevAddrs(t)
	d := startDev(t, dir, dataDir, addrs)
	require.Contains(t, d.log(), d.stack.Key, "the generated key is printed")
	require.Contains(t, d.log(), "curl ", "a copy-paste curl example is printed")
	require.Contains(t, d.log(), "Web UI   http://"+addrs.api+"/ui/", "the UI's address is printed")
	st, err := os.Stat(filepath.Join(dataDir, "api-key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	c := d.stack.client(t)
	name, _ := c.register(readExample(t, "seed-000-example-workflow.json"))
	first := c.waitDone(c.start(name, `{}`), runTimeout)
	require.Equal(t, "succeeded", first.Status, first.Error)
	require.Zero(t, establishedOnPort(t, addrs.kafka), "braid dev's services reach its broker in process, not over TCP")
	// A run in flight at shutdown: it must finish after the restart.
	slow, _ := c.register(shellWorkflow("slow-chain", map[string]string{"a": "sleep 2", "b": "echo b"},
		map[string][]string{"b": {"a"}}))
	pending := c.start(slow, `{}`)
	c.waitRun(pending, runTimeout, "a running", func(r apiRun) bool {
		return len(r.Nodes) > 0 && r.node(t, "a").State == "running"
	})
	key := d.stack.Key

	require.NoError(t, d.stop(procStopTimeout), "SIGTERM: a clean, bounded shutdown with exit 0")
	require.Contains(t, d.log(), "stopped", "shutdown steps are logged")
	_, stopping, found := strings.Cut(d.log(), `msg="stopping the services"`)
	require.True(t, found, "the stop is logged")
	for _, line := range strings.Split(stopping, "\n") {
		require.NotContains(t, line, "level=WARN", "a clean stop warns of nothing (the partition readers' closed connections, a group rebalancing)")
	}

	d2 := startDev(t, dir, dataDir, addrs)
	require.Equal(t, key, d2.stack.Key, "the stored key is reused")
	require.NotContains(t, d2.log(), "WARNING", "redis-server is installed: no fallback")
	c2 := d2.stack.client(t)
	again := c2.run(first.ID)
	require.Equal(t, "succeeded", again.Status)
	require.Equal(t, first.Nodes, again.Nodes)
	resumed := c2.waitDone(pending, runTimeout)
	require.Equal(t, "succeeded", resumed.Status, "the unfinished run resumes: %+v", resumed)
	fresh := c2.waitDone(c2.start(name, `{}`), runTimeout)
	require.Equal(t, "succeeded", fresh.Status, fresh.Error)
}

// establishedOnPort counts the established TCP connections of this host
// (its network namespace) whose local or remote port is addr's.
func establishedOnPort(t *testing.T, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	p, err := strconv.Atoi(port)
	require.NoError(t, err)
	hexPort := fmt.Sprintf(":%04X", p)
	n := 0
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n")[1:] {
			// sl local_address rem_address st ...; st 01 is ESTABLISHED.
			fs := strings.Fields(line)
			if len(fs) > 3 && fs[3] == "01" && (strings.HasSuffix(fs[1], hexPort) || strings.HasSuffix(fs[2], hexPort)) {
				n++
			}
		}
	}
	return n
}

func TestDevPortTakenNamesFlag(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	addrs := freeDevAddrs(t)
	addrs.api = ln.Addr().String()
	res := braid(t, nil, "dev", "--data-dir", t.TempDir(), "--addr", addrs.api, "--kafka-addr", addrs.kafka, "--redis-addr", addrs.redis)
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "--addr")
	require.Contains(t, res.stderr, "already in use")

	addrs = freeDevAddrs(t)
	addrs.redis = ln.Addr().String()
	res = braid(t, nil, "dev", "--data-dir", t.TempDir(), "--addr", addrs.api, "--kafka-addr", addrs.kafka, "--redis-addr", addrs.redis)
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "--redis-addr")
}

func TestDevEmbeddedRedisFallback(t *testing.T) {
	t.Parallel()
	dir, dataDir := t.TempDir(), filepath.Join(t.TempDir(), ".braid")
	d := startDev(t, dir, dataDir, freeDevAddrs(t), "--embedded-redis")
	require.Contains(t, d.log(), "WILL NOT SURVIVE A RESTART")
	c := d.stack.client(t)
	name, _ := c.register(readExample(t, "seed-000-example-workflow.json"))
	r := c.waitDone(c.start(name, `{}`), runTimeout)
	require.Equal(t, "succeeded", r.Status, r.Error)
}

func TestDevHonoursAPIKeysEnv(t *testing.T) {
	t.Parallel()
	dir, dataDir, addrs := t.TempDir(), filepath.Join(t.TempDir(), ".braid"), freeDevAddrs(t)
	secret := "s" + randomHex(t, 16)
	p := startProc(t, dir, "dev-env", bins(t).Braid, []string{"BRAID_API_KEYS=ops:" + secret + ":write"},
		"dev", "--data-dir", dataDir, "--addr", addrs.api, "--kafka-addr", addrs.kafka, "--redis-addr", addrs.redis, "--workers", "1")
	t.Cleanup(func() { _ = p.stop(procStopTimeout); dumpLogs(t, p) })
	require.NoError(t, poll(devReady, func() (bool, error) {
		if p.exited() {
			return false, errExited(p)
		}
		return strings.Contains(p.log(), "Braid dev stack is up."), nil
	}))
	require.NotContains(t, p.log(), secret, "keys from BRAID_API_KEYS are never echoed")
	require.Contains(t, p.log(), "from BRAID_API_KEYS")
	_, err := os.Stat(filepath.Join(dataDir, "api-key"))
	require.True(t, os.IsNotExist(err), "no key is generated when BRAID_API_KEYS is set")
	c := (&Stack{URL: "http://" + addrs.api, Key: secret}).client(t)
	name, _ := c.register(readExample(t, "seed-000-example-workflow.json"))
	require.Equal(t, "example_workflow", name)
}

// TestDevRunsManyTasksAtOnceByDefault: a default braid dev worker runs
// tens of tasks at once (--worker-concurrency 64), so a fan-out of
// I/O-bound tasks does not crawl a few at a time on a developer's machine.
// Read from the nodes' own start and finish times, not from the wall
// clock: 24 one-second tasks on the one worker startDev runs overlap far
// more than the 4 the old default allowed.
func TestDevRunsManyTasksAtOnceByDefault(t *testing.T) {
	t.Parallel()
	dir, dataDir, addrs := t.TempDir(), filepath.Join(t.TempDir(), ".braid"), freeDevAddrs(t)
	d := startDev(t, dir, dataDir, addrs)
	c := d.stack.client(t)
	const tasks = 24
	nodes := make([]string, tasks)
	for i := range nodes {
		nodes[i] = fmt.Sprintf(`{"id":"s%d","handler":"simulate","config":{"duration":"1s"}}`, i)
	}
	name, _ := c.register([]byte(`{"name":"dev-wide","nodes":[` + strings.Join(nodes, ",") + `]}`))
	run := c.waitDone(c.start(name, `{}`), runTimeout)
	require.Equal(t, "succeeded", run.Status, run.Error)
	require.Len(t, run.Nodes, tasks)
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	for _, n := range run.Nodes {
		start, err := time.Parse(time.RFC3339Nano, n.StartedAt)
		require.NoError(t, err, "node %s started_at", n.ID)
		end, err := time.Parse(time.RFC3339Nano, n.FinishedAt)
		require.NoError(t, err, "node %s finished_at", n.ID)
		edges = append(edges, edge{start, +1}, edge{end, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.d - b.d // a finish before a start at the same instant
	})
	cur, peak := 0, 0
	for _, e := range edges {
		cur += e.d
		peak = max(peak, cur)
	}
	t.Logf("peak: %d of %d one-second tasks at once on one default worker", peak, tasks)
	require.GreaterOrEqual(t, peak, tasks/2, "a default braid dev worker ran at most %d tasks at once", peak)
}
