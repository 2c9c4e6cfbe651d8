package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/worker"
	"github.com/stretchr/testify/require"
)

// TestWorkerPoolsByHandler runs two worker processes offering different
// handlers (BRAID_WORKER_HANDLERS): a pool of noop and one of transform.
// Every run of a workflow mixing both succeeds at its first attempt, each
// task on the pool of its handler — no worker is handed, or fails, a task
// it cannot run. A task whose handler no live worker offers (shell) waits,
// queued and saying why, until a worker offering it starts; then it runs.
func TestWorkerPoolsByHandler(t *testing.T) {
	t.Parallel()
	pools := []string{"noop", "transform", "shell"} // worker i offers pools[i]; the third is added later
	f := startFaultStack(t, stackOpts{workers: 2, workerEnv: func(i int) []string {
		return []string{"BRAID_WORKER_HANDLERS=" + pools[i]}
	}})
	c := f.client(t)

	nodes := []string{`{"id": "a", "handler": "noop", "config": {"n": 1}}`}
	var last []string
	for i := range 4 {
		nodes = append(nodes,
			fmt.Sprintf(`{"id": "t%d", "handler": "transform", "depends_on": ["a"], "config": {"jq": ".n + %d", "input": "<< a >>"}}`, i, i),
			fmt.Sprintf(`{"id": "n%d", "handler": "noop", "depends_on": ["a"]}`, i))
		last = append(last, fmt.Sprintf(`"t%d"`, i), fmt.Sprintf(`"n%d"`, i))
	}
	nodes = append(nodes, `{"id": "z", "handler": "transform", "depends_on": [`+strings.Join(last, ", ")+`], "config": {"jq": ".a + .b", "input": {"a": "<< t0 >>", "b": "<< t3 >>"}}}`)
	name, _ := c.register(fmt.Appendf(nil, `{"name": %q, "nodes": [%s]}`, wfName(t, "pools"), strings.Join(nodes, ",\n")))
	handlerOf := func(node string) string {
		if strings.HasPrefix(node, "t") || node == "z" {
			return "transform"
		}
		return "noop"
	}
	workerOf := map[string]string{"noop": f.Workers[0], "transform": f.Workers[1]}

	var list struct {
		Items []struct {
			ID       string   `json:"id"`
			Handlers []string `json:"handlers"`
			Group    string   `json:"group"`
		} `json:"items"`
	}
	c.call(http.MethodGet, "/workers", nil, http.StatusOK, &list)
	groups := map[string]string{}
	for _, w := range list.Items {
		groups[w.ID] = w.Group
	}
	require.Equal(t, map[string]string{f.Workers[0]: worker.GroupFor([]string{"noop"}), f.Workers[1]: worker.GroupFor([]string{"transform"})}, groups,
		"GET /workers shows each worker's pool")
	require.NotEqual(t, groups[f.Workers[0]], groups[f.Workers[1]])

	var ids []string
	for range 10 {
		ids = append(ids, c.start(name, `{}`))
	}
	for _, id := range ids {
		r := c.waitDone(id, runTimeout)
		require.Equal(t, "succeeded", r.Status, "run %s: %s", id, r.Error)
		require.Len(t, r.Nodes, 10)
		for _, n := range r.Nodes {
			require.Equal(t, 1, n.Attempt, "run %s node %s needed another attempt", id, n.ID)
			require.Equal(t, workerOf[handlerOf(n.ID)], n.Worker, "run %s node %s ran on the wrong pool", id, n.ID)
		}
	}
	require.JSONEq(t, `5`, taskOutput(c, ids[0], "z"), "(1 + 0) + (1 + 3): the transform pool read the noop pool's output")

	shell, _ := c.register(fmt.Appendf(nil, `{"name": %q, "nodes": [
		{"id": "s", "handler": "shell", "config": {"command": "echo hi", "output": "text"}}]}`, wfName(t, "pools-shell")))
	id := c.start(shell, `{}`)
	waiting := func(r apiRun) bool {
		return len(r.Nodes) == 1 && r.Nodes[0].State == "queued" && r.Nodes[0].WaitingReason == "no live worker offers handler shell"
	}
	c.waitRun(id, runTimeout, "the shell task queued, no worker offering it", waiting)
	require.Never(t, func() bool { return !waiting(c.run(id)) }, 2*time.Second, 100*time.Millisecond,
		"a task whose handler nobody offers waits: no worker takes it, fails it or claims it")
	require.Zero(t, f.rdb.Exists(t.Context(), f.keys.Claim(id, "s", 0, 1)).Val())

	p := f.addWorker(t)
	f.waitJoined(p)
	r := c.waitDone(id, runTimeout)
	require.Equal(t, "succeeded", r.Status, r.Error)
	require.Equal(t, f.Workers[2], r.Nodes[0].Worker)
	require.Equal(t, 1, r.Nodes[0].Attempt)
	require.Contains(t, taskOutput(c, id, "s"), `"stdout":"hi\n"`)
}

// TestDevBannerConnectsAWorkerOfYourOwn: the line `braid dev` prints for a
// worker of one's own, run by a shell (which reads the Redis password from
// its file: the banner never prints it), connects a separate worker
// process to the stack — here the stock worker binary offering transform
// alone, with a data dir whose path holds a space. It registers in a pool
// of its own and the stack runs tasks with it beside its own workers.
func TestDevBannerConnectsAWorkerOfYourOwn(t *testing.T) {
	t.Parallel()
	dir, dataDir, addrs := t.TempDir(), filepath.Join(t.TempDir(), "my data", ".braid"), freeDevAddrs(t)
	d := startDev(t, dir, dataDir, addrs)
	pw, err := os.ReadFile(filepath.Join(dataDir, "redis-password"))
	require.NoError(t, err)
	requireAbsent(t, d.log(), strings.TrimSpace(string(pw)), "braid dev printed its Redis password")
	var line string
	for l := range strings.Lines(d.log()) {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "export BRAID_KAFKA_BROKERS=") {
			line = l
		}
	}
	require.NotEmpty(t, line, "no line for a worker of one's own in the banner")
	out, err := exec.Command("sh", "-c", line+`; printf '%s\n%s\n' "$BRAID_KAFKA_BROKERS" "$BRAID_REDIS_URL"`).Output()
	require.NoError(t, err)
	env := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, env, 2)
	require.Contains(t, env[1], strings.TrimSpace(string(pw)), "the shell read the password into the URL")

	own := startProc(t, dir, "own-worker", bins(t).Worker, []string{"BRAID_KAFKA_BROKERS=" + env[0], "BRAID_REDIS_URL=" + env[1],
		"BRAID_WORKER_HANDLERS=transform", "BRAID_WORKER_ID=own-1"})
	t.Cleanup(func() {
		_ = own.stop(procStopTimeout)
		dumpLogs(t, own)
	})
	c := d.stack.client(t)
	err = poll(30*time.Second, func() (bool, error) {
		if own.exited() {
			return false, errExited(own)
		}
		var list struct {
			Items []struct {
				ID    string `json:"id"`
				Group string `json:"group"`
			} `json:"items"`
		}
		c.call(http.MethodGet, "/workers", nil, http.StatusOK, &list)
		for _, w := range list.Items {
			if w.ID == "own-1" {
				return w.Group == worker.GroupFor([]string{"transform"}), nil
			}
		}
		return false, nil
	})
	require.NoError(t, err, "the worker started with the banner's line never registered in its pool")
	name, _ := c.register(fmt.Appendf(nil, `{"name": %q, "nodes": [{"id": "a", "handler": "noop", "config": {"n": 2}},
		{"id": "b", "handler": "transform", "depends_on": ["a"], "config": {"jq": ".n * 21", "input": "<< a >>"}}]}`, wfName(t, "own")))
	id := c.start(name, `{}`)
	r := c.waitDone(id, runTimeout)
	require.Equal(t, "succeeded", r.Status, r.Error)
	require.JSONEq(t, `42`, taskOutput(c, id, "b"))
}
