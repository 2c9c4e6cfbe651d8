package e2e

import (
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
