package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// builtinWorkflow is a wait node, then an approval gate, then a worker node
// that reads the approval's output.
func builtinWorkflow(name, gateTimeout string) []byte {
	timeout := ""
	if gateTimeout != "" {
		timeout = `,"timeout":"` + gateTimeout + `"`
	}
	return []byte(`{"name":"` + name + `","nodes":[
	  {"id":"nap","handler":"wait","config":{"duration":"300ms"}},
	  {"id":"gate","handler":"approval","depends_on":["nap"],"config":{"message":"deploy?"}` + timeout + `},
	  {"id":"deploy","handler":"noop","depends_on":["gate"],"config":{"by":"<< gate.by >>","note":"<< gate.comment >>"}}]}`)
}

func TestStackWaitAndApproval(t *testing.T) {
	t.Parallel()
	s := shared(t)
	decide := func(t *testing.T, c *apiClient, id, verb string) {
		path := "/runs/" + url.PathEscape(id) + "/tasks/gate/" + verb
		c.call(http.MethodPost, path, []byte(`{"reason":"ship it"}`), http.StatusAccepted, nil)
	}
	awaiting := func(t *testing.T, c *apiClient, id string) apiRun {
		return c.waitRun(id, runTimeout, "gate awaiting approval", func(r apiRun) bool {
			return len(r.Nodes) == 3 && r.node(t, "gate").WaitingReason == "awaiting approval"
		})
	}

	t.Run("approve", func(t *testing.T) {
		t.Parallel()
		c := s.client(t)
		name, _ := c.register(builtinWorkflow(wfName(t, "gate-ok"), ""))
		id := c.start(name, `{}`)
		r := awaiting(t, c, id)
		require.Equal(t, "succeeded", r.node(t, "nap").State, "the wait finished before the gate opened")
		require.Equal(t, "queued", r.node(t, "gate").State)
		require.Equal(t, "pending", r.node(t, "deploy").State)

		decide(t, c, id, "approve")
		r = c.waitDone(id, runTimeout)
		require.Equal(t, "succeeded", r.Status, r.Error)
		var task struct {
			Output map[string]string `json:"output"`
		}
		c.call(http.MethodGet, "/runs/"+url.PathEscape(id)+"/tasks/deploy", nil, http.StatusOK, &task)
		require.Equal(t, map[string]string{"by": "e2e", "note": "ship it"}, task.Output)
		var nap struct {
			Output struct {
				WaitedMs int64 `json:"waited_ms"`
			} `json:"output"`
		}
		c.call(http.MethodGet, "/runs/"+url.PathEscape(id)+"/tasks/nap", nil, http.StatusOK, &nap)
		require.GreaterOrEqual(t, nap.Output.WaitedMs, int64(300), "the wait node slept its duration")

		code, body, err := c.raw(http.MethodPost, "/runs/"+url.PathEscape(id)+"/tasks/gate/reject", nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusConflict, code, "a decided gate cannot be decided again: %s", body)
	})

	t.Run("reject", func(t *testing.T) {
		t.Parallel()
		c := s.client(t)
		name, _ := c.register(builtinWorkflow(wfName(t, "gate-no"), ""))
		id := c.start(name, `{}`)
		awaiting(t, c, id)
		decide(t, c, id, "reject")
		r := c.waitDone(id, runTimeout)
		require.Equal(t, "failed", r.Status)
		require.Equal(t, "failed", r.node(t, "gate").State)
		require.Equal(t, "rejected by e2e: ship it", r.node(t, "gate").Error)
		require.Equal(t, "skipped", r.node(t, "deploy").State)
	})

	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		c := s.client(t)
		name, _ := c.register(builtinWorkflow(wfName(t, "gate-late"), "1s"))
		r := c.waitDone(c.start(name, `{}`), runTimeout)
		require.Equal(t, "failed", r.Status)
		require.Equal(t, "approval timed out after 1s with no decision", r.node(t, "gate").Error)
	})

	t.Run("bad wait config is a 422 with its path", func(t *testing.T) {
		t.Parallel()
		c := s.client(t)
		code, body, err := c.raw(http.MethodPost, "/workflows", []byte(`{"name":"`+wfName(t, "bad-wait")+`",
		  "nodes":[{"id":"nap","handler":"wait","config":{"duration":"soon"}}]}`))
		require.NoError(t, err)
		require.Equal(t, http.StatusUnprocessableEntity, code, string(body))
		var p struct {
			Errors []struct{ Path, Message string } `json:"errors"`
		}
		require.NoError(t, json.Unmarshal(body, &p))
		require.Len(t, p.Errors, 1)
		require.Equal(t, "$.nodes[0].config.duration", p.Errors[0].Path)
	})
}
