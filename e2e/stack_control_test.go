package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStackRerunFrom re-runs a node of a finished run: exactly that node and
// its downstream run a new attempt; the others keep theirs.
func TestStackRerunFrom(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	// a → b → d, a → c: rerun from b re-runs b and d only.
	name, _ := c.register(shellWorkflow(wfName(t, "rerun"),
		map[string]string{"a": "echo a", "b": "echo b", "c": "echo c", "d": "echo d"},
		map[string][]string{"b": {"a"}, "c": {"a"}, "d": {"b"}}))
	id := c.start(name, `{}`)
	before := c.waitDone(id, runTimeout)
	require.Equal(t, "succeeded", before.Status, before.Error)

	c.call(http.MethodPost, "/runs/"+url.PathEscape(id)+"/rerun?from=b", nil, http.StatusAccepted, nil)
	after := c.waitRun(id, runTimeout, "re-run b and d", func(r apiRun) bool {
		return r.Status == "succeeded" && r.node(t, "d").Attempt > before.node(t, "d").Attempt
	})
	for id, rerun := range map[string]bool{"a": false, "b": true, "c": false, "d": true} {
		want := before.node(t, id).Attempt
		if rerun {
			want++
		}
		require.Equal(t, want, after.node(t, id).Attempt, "node %s", id)
	}
}

// TestStackPauseResume pauses a run while its first node runs: nothing new
// starts while paused (the running node finishes); resume continues it.
func TestStackPauseResume(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register(shellWorkflow(wfName(t, "pause"),
		map[string]string{"slow": "sleep 1", "next": "echo next"}, map[string][]string{"next": {"slow"}}))
	id := c.start(name, `{}`)
	c.waitRun(id, runTimeout, "slow running", func(r apiRun) bool {
		return len(r.Nodes) == 2 && r.node(t, "slow").State == "running"
	})
	c.call(http.MethodPost, "/runs/"+url.PathEscape(id)+"/pause", nil, http.StatusAccepted, nil)
	paused := c.waitRun(id, runTimeout, "slow finished while paused", func(r apiRun) bool {
		return r.node(t, "slow").State == "succeeded" && r.node(t, "next").WaitingReason == "run paused"
	})
	require.Equal(t, "pending", paused.node(t, "next").State, "nothing starts while paused")
	require.Equal(t, "running", paused.Status)

	c.call(http.MethodPost, "/runs/"+url.PathEscape(id)+"/resume", nil, http.StatusAccepted, nil)
	done := c.waitDone(id, runTimeout)
	require.Equal(t, "succeeded", done.Status, done.Error)
	require.Equal(t, "succeeded", done.node(t, "next").State)
}

// TestStackRerunFromFanOutKeepsKeysUnique re-runs a fan-out node, whose
// instances all start afresh: each instance's attempt is numbered on from
// the launch before, so the idempotency key a task gets (and the http
// handler sends) is a new one — a service deduplicating on it runs the
// rerun's calls instead of answering them from its cache.
func TestStackRerunFromFanOutKeepsKeysUnique(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register([]byte(`{"name":"` + wfName(t, "rerun-fan") + `","nodes":[
	  {"id":"list","handler":"noop","config":{"xs":[1,2,3]}},
	  {"id":"each","handler":"shell","depends_on":["list"],"foreach":"<< list.xs >>",
	   "config":{"command":"echo \"$BRAID_IDEMPOTENCY_KEY\"","output":"text"}}]}`))
	id := c.start(name, `{}`)
	require.Equal(t, "succeeded", c.waitDone(id, runTimeout).Status)
	keys := func() []string {
		var task struct {
			Output []struct {
				Result string `json:"result"`
			} `json:"output"`
		}
		c.call(http.MethodGet, "/runs/"+url.PathEscape(id)+"/tasks/each", nil, http.StatusOK, &task)
		require.Len(t, task.Output, 3)
		var out []string
		for _, o := range task.Output {
			out = append(out, o.Result)
		}
		return out
	}
	before := keys()
	for k, key := range before {
		require.Equal(t, fmt.Sprintf("%s:each:%d:1", id, k), key)
	}

	c.call(http.MethodPost, "/runs/"+url.PathEscape(id)+"/rerun?from=each", nil, http.StatusAccepted, nil)
	after := c.waitRun(id, runTimeout, "each re-run", func(r apiRun) bool {
		return r.Status == "succeeded" && r.node(t, "each").Attempt == 2
	})
	require.Equal(t, "succeeded", after.Status)
	for k, key := range keys() {
		require.Equal(t, fmt.Sprintf("%s:each:%d:2", id, k), key, "instance %d's rerun is its attempt 2", k)
	}
}
