package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/stretchr/testify/require"
)

// The scenarios below drive the process stack only through HTTP.

// runTimeout bounds one scenario run.
const runTimeout = 60 * time.Second

// shellWorkflow returns a definition named name whose nodes are shell
// commands, given as id → command, with deps as id → parents.
func shellWorkflow(name string, cmds map[string]string, deps map[string][]string) []byte {
	type node struct {
		ID        string         `json:"id"`
		Handler   string         `json:"handler"`
		Config    map[string]any `json:"config"`
		DependsOn []string       `json:"depends_on,omitempty"`
	}
	def := struct {
		Name  string `json:"name"`
		Nodes []node `json:"nodes"`
	}{Name: name}
	for id, cmd := range cmds {
		def.Nodes = append(def.Nodes, node{ID: id, Handler: "shell", Config: map[string]any{"command": cmd}, DependsOn: deps[id]})
	}
	b, _ := json.Marshal(def)
	return b
}

// wfName is a unique workflow name for t.
func wfName(t *testing.T, prefix string) string {
	return testinfra.UniqueName(t, prefix)
}

func TestStackSeedExamples(t *testing.T) {
	t.Parallel()
	s := shared(t)
	t.Run("000 shell diamond", func(t *testing.T) {
		t.Parallel()
		c := s.client(t)
		name, _ := c.register(readExample(t, "seed-000-example-workflow.json"))
		r := c.waitDone(c.start(name, `{}`), runTimeout)
		require.Equal(t, "succeeded", r.Status, r.Error)
		for _, id := range []string{"A", "B", "C", "D"} {
			n := r.node(t, id)
			require.Equal(t, "succeeded", n.State)
			require.Contains(t, s.Workers, n.Worker, "node %s ran on an unknown worker", id)
		}
		var task struct {
			Output struct {
				Stdout string `json:"stdout"`
			} `json:"output"`
			Worker string `json:"worker"`
		}
		c.call(http.MethodGet, "/runs/"+r.ID+"/tasks/D", nil, http.StatusOK, &task)
		require.Equal(t, "D\n", task.Output.Stdout)
		require.NotEmpty(t, task.Worker)
	})
	t.Run("002 order processing", func(t *testing.T) {
		t.Parallel()
		c := s.client(t)
		name, _ := c.register(readExample(t, "seed-002-order-processing.json"))
		r := c.waitDone(c.start(name, `{"order_id":"o-1"}`), 2*runTimeout)
		// charge fails with p=0.3 per attempt and has three attempts: the
		// run succeeds, or fails after exactly three charge attempts.
		switch r.Status {
		case "succeeded":
			for _, id := range []string{"validate", "charge", "ship"} {
				require.Equal(t, "succeeded", r.node(t, id).State)
			}
		case "failed":
			require.Equal(t, 3, r.node(t, "charge").Attempt)
			require.Equal(t, "skipped", r.node(t, "ship").State)
		default:
			t.Fatalf("run %s ended %s", r.ID, r.Status)
		}
	})
	t.Run("004 fan-out fan-in", func(t *testing.T) {
		t.Parallel()
		c := s.client(t)
		name, _ := c.register(readExample(t, "seed-004-fan-out-fan-in.json"))
		r := c.waitDone(c.start(name, `{}`), runTimeout)
		require.Equal(t, "succeeded", r.Status, r.Error)
		var task struct {
			Output struct {
				Result string `json:"result"`
			} `json:"output"`
		}
		c.call(http.MethodGet, "/runs/"+r.ID+"/tasks/C", nil, http.StatusOK, &task)
		require.Equal(t, "HTTPS://API.EXAMPLE.COM/ORDERS/42", task.Output.Result)
	})
}

func TestStackWorkersShareWork(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	cmds := map[string]string{}
	for i := range 12 {
		cmds[fmt.Sprintf("n%02d", i)] = "sleep 0.3"
	}
	name, _ := c.register(shellWorkflow(wfName(t, "share"), cmds, nil))
	seen := map[string]int{}
	// Dispatches are keyed by run and node, spread over six partitions
	// that the two workers' consumer group splits; a few runs make sure a
	// rebalance at the start cannot hide the second worker.
	for attempt := 0; attempt < 3 && len(seen) < len(s.Workers); attempt++ {
		r := c.waitDone(c.start(name, `{}`), runTimeout)
		require.Equal(t, "succeeded", r.Status, r.Error)
		for _, n := range r.Nodes {
			require.Contains(t, s.Workers, n.Worker)
			seen[n.Worker]++
			// Each node sleeps 0.3 s: its run time is at least that, and its
			// queue wait is reported apart (lower bounds only: the machine
			// may be busy).
			require.NotNil(t, n.QueueWaitMs, "node %s has no queue_wait_ms", n.ID)
			require.GreaterOrEqual(t, *n.QueueWaitMs, int64(0), "node %s", n.ID)
			require.NotNil(t, n.DurationMs, "node %s has no duration_ms", n.ID)
			require.GreaterOrEqual(t, *n.DurationMs, int64(300), "node %s ran its sleep 0.3", n.ID)
		}
	}
	require.Len(t, seen, len(s.Workers), "tasks per worker: %v", seen)
}

func TestStackRunListing(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	good, _ := c.register(shellWorkflow(wfName(t, "good"), map[string]string{"a": "true"}, nil))
	bad, _ := c.register(shellWorkflow(wfName(t, "bad"), map[string]string{"a": "exit 3"}, nil))
	var goodIDs []string
	for range 3 {
		id := c.start(good, `{}`)
		goodIDs = append(goodIDs, id)
		c.waitDone(id, runTimeout)
	}
	badID := c.start(bad, `{}`)
	require.Equal(t, "failed", c.waitDone(badID, runTimeout).Status)

	list := func(query string) ([]string, string) {
		var page struct {
			Items []struct {
				ID       string `json:"id"`
				Workflow string `json:"workflow"`
				Status   string `json:"status"`
			} `json:"items"`
			NextCursor string `json:"next_cursor"`
		}
		c.call(http.MethodGet, "/runs?"+query, nil, http.StatusOK, &page)
		var ids []string
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		return ids, page.NextCursor
	}
	newestFirst := []string{goodIDs[2], goodIDs[1], goodIDs[0]}
	ids, _ := list("workflow=" + good)
	require.Equal(t, newestFirst, ids)
	first, cur := list("workflow=" + good + "&limit=2")
	require.Equal(t, newestFirst[:2], first)
	require.NotEmpty(t, cur)
	rest, _ := list("workflow=" + good + "&limit=2&cursor=" + url.QueryEscape(cur))
	require.Equal(t, newestFirst[2:], rest)
	ids, _ = list("workflow=" + bad + "&status=failed")
	require.Equal(t, []string{badID}, ids)
	ids, _ = list("workflow=" + good + "&status=failed")
	require.Empty(t, ids)
	ids, _ = list("status=failed&limit=100")
	require.Contains(t, ids, badID)
	require.NotContains(t, ids, goodIDs[0])
}

func TestStackShellLogs(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register(shellWorkflow(wfName(t, "logs"),
		map[string]string{"say": "for i in 1 2 3; do echo line-$i; done; echo oops >&2"}, nil))
	r := c.waitDone(c.start(name, `{}`), runTimeout)
	require.Equal(t, "succeeded", r.Status, r.Error)
	status, body, err := c.raw(http.MethodGet, "/runs/"+r.ID+"/tasks/say/logs", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, string(body))
	for _, want := range []string{"line-1", "line-2", "line-3", "oops"} {
		require.Contains(t, string(body), want)
	}
	require.Less(t, strings.Index(string(body), "line-1"), strings.Index(string(body), "line-3"))
}

func TestStackCancelLongShell(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	// The sleep runs as a child of the shell, in the attempt's process group.
	name, _ := c.register(shellWorkflow(wfName(t, "cancel"),
		map[string]string{"nap": "sleep 300 & echo $! > " + pidFile + "; wait", "after": "true"},
		map[string][]string{"after": {"nap"}}))
	id := c.start(name, `{}`)
	var pid int
	require.NoError(t, poll(runTimeout, func() (bool, error) {
		b, err := os.ReadFile(pidFile)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false, nil
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil, err
	}), "the sleep never started")
	require.True(t, alive(pid), "sleep %d is running", pid)

	// How fast the kill follows is not asserted here (the suite shares two
	// cores with other tests); pkg/worker's TestStopNoticeStopsAttemptBeforeItsBeat
	// shows the stop notice, not the next heartbeat, ends the attempt.
	started := time.Now()
	c.call(http.MethodPost, "/runs/"+id+"/cancel", nil, http.StatusAccepted, nil)
	require.NoError(t, poll(10*time.Second, func() (bool, error) { return !alive(pid), nil }), "sleep %d still running", pid)
	t.Logf("the process group was killed %s after the cancel", time.Since(started))

	r := c.waitDone(id, 20*time.Second)
	require.Equal(t, "cancelled", r.Status)
	require.Equal(t, "cancelled", r.node(t, "nap").State)
	require.Equal(t, "cancelled", r.node(t, "after").State, "nothing more is dispatched")
}

// alive reports whether process pid exists (signal 0 probes without signalling).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestStackRetryFailedRun(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	marker := filepath.Join(t.TempDir(), "ready")
	name, _ := c.register(shellWorkflow(wfName(t, "retry"),
		map[string]string{"first": "echo one", "gate": "test -f " + marker, "last": "echo done"},
		map[string][]string{"gate": {"first"}, "last": {"gate"}}))
	id := c.start(name, `{}`)
	r := c.waitDone(id, runTimeout)
	require.Equal(t, "failed", r.Status)
	require.Equal(t, "failed", r.node(t, "gate").State)
	require.Equal(t, "skipped", r.node(t, "last").State)
	firstAttempt := r.node(t, "first").Attempt

	require.NoError(t, os.WriteFile(marker, nil, 0o600))
	c.call(http.MethodPost, "/runs/"+id+"/retry", nil, http.StatusAccepted, nil)
	r = c.waitRun(id, runTimeout, "succeeded after retry", func(r apiRun) bool { return r.Status == "succeeded" })
	require.Equal(t, "succeeded", r.node(t, "gate").State)
	require.Greater(t, r.node(t, "gate").Attempt, 1, "the retried node runs a new attempt")
	require.Equal(t, r.node(t, "gate").Attempt, r.node(t, "gate").MaxAttempts,
		"the retry gave the node (no retry policy) one attempt of its own, numbered on: attempt 2 of 2")
	require.Equal(t, firstAttempt, r.node(t, "first").Attempt, "succeeded nodes are kept, not re-run")
}
