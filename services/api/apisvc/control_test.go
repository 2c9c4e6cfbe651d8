package apisvc_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCancelThroughAPI(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true})
	name, _ := e.register(`{"name":"slow","nodes":[{"id":"nap","handler":"shell","config":{"command":"sleep 30"}},{"id":"next","handler":"noop","depends_on":["nap"]}]}`)
	id := e.startRun(name, nil, nil)
	require.Eventually(t, func() bool {
		r := e.waitStatus(id, "running", 30*time.Second)
		return r.Nodes[0].State == "running" && r.Nodes[1].WaitingReason == "waiting for parents: nap"
	}, 30*time.Second, 25*time.Millisecond)
	var acc struct {
		Action    string `json:"action"`
		RequestID string `json:"request_id"`
	}
	e.must(req{method: "POST", path: "/runs/" + id + "/cancel", body: `{"reason":"test"}`}, http.StatusAccepted).json(t, &acc)
	require.Equal(t, "cancel", acc.Action)
	require.NotEmpty(t, acc.RequestID)
	run := e.waitStatus(id, "cancelled", 30*time.Second)
	require.Equal(t, "cancelled", run.Nodes[0].State)
	p := e.must(req{method: "POST", path: "/runs/" + id + "/cancel"}, http.StatusConflict).problem(t)
	require.Contains(t, p.Detail, "already cancelled")
	e.must(req{method: "POST", path: "/runs/" + id + "/pause"}, http.StatusConflict).problem(t)
}

func TestRetryThroughAPI(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true})
	dir := t.TempDir()
	name, _ := e.register(`{"name":"flaky","nodes":[{"id":"check","handler":"shell","config":{"command":"test -f ` + dir + `/ok"}},{"id":"done","handler":"noop","depends_on":["check"]}]}`)
	id := e.startRun(name, nil, nil)
	run := e.waitStatus(id, "failed", 30*time.Second)
	require.Equal(t, "failed", run.Nodes[0].State)
	require.NotEmpty(t, run.Nodes[0].Error)
	require.Equal(t, "skipped", run.Nodes[1].State)

	require.NoError(t, touch(dir+"/ok"))
	e.must(req{method: "POST", path: "/runs/" + id + "/retry"}, http.StatusAccepted)
	run = e.waitStatus(id, "succeeded", 30*time.Second)
	require.Equal(t, 2, run.Nodes[0].Attempt, "the retry is a new attempt")
	require.Equal(t, "succeeded", run.Nodes[1].State)
	p := e.must(req{method: "POST", path: "/runs/" + id + "/retry"}, http.StatusConflict).problem(t)
	require.Contains(t, p.Detail, "succeeded: retry re-runs failed, skipped and cancelled nodes, and it has none", "a retry that would do nothing is refused")

	e.must(req{method: "POST", path: "/runs/" + id + "/rerun?from=done"}, http.StatusAccepted)
	require.Eventually(t, func() bool {
		r := e.waitStatus(id, "succeeded", 30*time.Second)
		return r.Nodes[1].Attempt == 2
	}, 30*time.Second, 25*time.Millisecond, "rerun-from runs the node again")
	require.Equal(t, 2, e.waitStatus(id, "succeeded", time.Second).Nodes[0].Attempt, "upstream of from is kept")
}

func TestControlPreconditions(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	name, _ := e.register(`{"name":"ctl","nodes":[{"id":"a","handler":"noop"},{"id":"ok","handler":"approval","depends_on":["a"]}]}`)
	id := e.startRun(name, nil, nil) // no orchestrator: stays pending
	e.must(req{method: "POST", path: "/runs/" + id + "/pause"}, http.StatusAccepted)
	e.must(req{method: "POST", path: "/runs/" + id + "/resume", body: ""}, http.StatusAccepted)
	p := e.must(req{method: "POST", path: "/runs/" + id + "/retry"}, http.StatusConflict).problem(t)
	require.Contains(t, p.Detail, "applies to finished runs")
	p = e.must(req{method: "POST", path: "/runs/" + id + "/tasks/a/approve"}, http.StatusConflict).problem(t)
	require.Contains(t, p.Detail, "node a is not an approval node")
	for _, verb := range []string{"approve", "reject"} {
		p = e.must(req{method: "POST", path: "/runs/" + id + "/tasks/ok/" + verb, body: `{"reason":"early"}`}, http.StatusConflict).problem(t)
		require.Equal(t, `approval node ok of run "`+id+`" is not awaiting a decision yet (run not started yet: waiting for the orchestrator); approve or reject it once it is`, p.Detail,
			"a decision the orchestrator would ignore is refused, not accepted and lost")
	}
	e.must(req{method: "POST", path: "/runs/" + id + "/tasks/nope/approve"}, http.StatusNotFound).problem(t)
	e.must(req{method: "POST", path: "/runs/missing-run/cancel"}, http.StatusNotFound).problem(t)
}

// TestApprovalBeforeItsTurn: an approve or reject for an approval node
// whose parents have not finished is refused with a 409 saying why (the
// orchestrator would ignore it), and the node still waits for a decision
// when its turn comes.
func TestApprovalBeforeItsTurn(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true})
	name, _ := e.register(`{"name":"early","nodes":[{"id":"nap","handler":"wait","config":{"duration":"1h"}},{"id":"gate","handler":"approval","depends_on":["nap"],"config":{"message":"Ship <it>?"}}]}`)
	id := e.startRun(name, nil, nil)
	require.Eventually(t, func() bool {
		var v runView
		e.must(req{method: "GET", path: "/runs/" + id}, http.StatusOK).json(t, &v)
		return v.Nodes[0].State == "running"
	}, 30*time.Second, 10*time.Millisecond, "the wait node sleeps")
	for _, verb := range []string{"approve", "reject"} {
		p := e.must(req{method: "POST", path: "/runs/" + id + "/tasks/gate/" + verb}, http.StatusConflict).problem(t)
		require.Equal(t, `approval node gate of run "`+id+`" is not awaiting a decision yet (waiting for parents: nap); approve or reject it once it is`, p.Detail)
	}
	var v runView
	e.must(req{method: "GET", path: "/runs/" + id}, http.StatusOK).json(t, &v)
	require.Equal(t, "pending", v.Nodes[1].State)
	require.Equal(t, "Ship <it>?", v.Nodes[1].ApprovalMessage, "the message for whoever decides")
	require.Empty(t, v.Nodes[0].ApprovalMessage)
	e.must(req{method: "POST", path: "/runs/" + id + "/cancel"}, http.StatusAccepted)
	e.waitStatus(id, "cancelled", 30*time.Second)
}
