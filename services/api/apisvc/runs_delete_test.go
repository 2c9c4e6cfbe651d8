package apisvc_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDeleteRun: DELETE /runs/{id} answers 409 while the run has not ended,
// 403 to a read key, then 204 once it has — right after it ended, when the
// orchestrator may still hold its lock — and the run is gone from the
// api (404 on every view, not in the list) and from Redis, its log lines
// included; a second DELETE and an unknown id are 404, a malformed id 400.
func TestDeleteRun(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true})
	dir := t.TempDir()
	name, _ := e.register(`{"name":"del","nodes":[{"id":"wait","handler":"shell","config":{"command":"echo started; while [ ! -f ` + dir + `/go ]; do sleep 0.05; done"}},{"id":"after","handler":"noop","depends_on":["wait"]}]}`)
	id := e.startRun(name, nil, nil)
	e.waitStatus(id, "running", 30*time.Second)
	p := e.must(req{method: "DELETE", path: "/runs/" + id}, http.StatusConflict).problem(t)
	require.Contains(t, p.Detail, "only an ended run")
	e.must(req{method: "DELETE", path: "/runs/" + id, key: readSecret}, http.StatusForbidden)

	require.NoError(t, touch(dir+"/go"))
	e.waitStatus(id, "succeeded", 30*time.Second)
	before, err := e.rdb.Keys(t.Context(), e.keys.RunPattern(id)).Result()
	require.NoError(t, err)
	require.Contains(t, before, e.keys.Logs(id, "wait", 0, 1), "the shell node logged")
	e.must(req{method: "DELETE", path: "/runs/" + id}, http.StatusNoContent)

	left, err := e.rdb.Keys(t.Context(), e.keys.RunPattern(id)).Result()
	require.NoError(t, err)
	require.Empty(t, left, "every key of the run is deleted")
	for _, path := range []string{"/runs/" + id, "/runs/" + id + "/tasks", "/runs/" + id + "/tasks/wait/logs"} {
		e.must(req{method: "GET", path: path}, http.StatusNotFound)
	}
	var list struct {
		Runs []struct {
			ID string `json:"id"`
		} `json:"runs"`
	}
	e.must(req{method: "GET", path: "/runs?workflow=" + name}, http.StatusOK).json(t, &list)
	require.Empty(t, list.Runs)
	e.must(req{method: "DELETE", path: "/runs/" + id}, http.StatusNotFound)
	e.must(req{method: "DELETE", path: "/runs/no-such-run"}, http.StatusNotFound)
	e.must(req{method: "DELETE", path: "/runs/bad%20id", malformed: true}, http.StatusBadRequest)
}
