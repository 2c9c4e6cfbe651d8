package apisvc_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// pinnedRun is the subset of GET /runs/{id} the versions test reads.
type pinnedRun struct {
	Status  string `json:"status"`
	Version int    `json:"version"`
	Nodes   []struct {
		ID    string `json:"id"`
		State string `json:"state"`
	} `json:"nodes"`
}

func (e *env) pinnedRun(id string) pinnedRun {
	e.t.Helper()
	var r pinnedRun
	e.must(req{method: "GET", path: "/runs/" + id}, http.StatusOK).json(e.t, &r)
	return r
}

func nodeIDs(r pinnedRun) []string {
	out := make([]string, len(r.Nodes))
	for i, n := range r.Nodes {
		out[i] = n.ID
	}
	return out
}

// TestRunsPinTheirVersion starts a run of version 1 whose node is still
// sleeping when version 2 (another graph) is registered: the run finishes
// on version 1's graph, and a new run uses version 2.
func TestRunsPinTheirVersion(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true})
	name, v1 := e.register(`{"name":"pinned","nodes":[{"id":"slow","handler":"shell","config":{"command":"sleep 2"}}]}`)
	require.Equal(t, 1, v1)
	first := e.startRun(name, nil, nil)
	require.Eventually(t, func() bool {
		r := e.pinnedRun(first)
		return len(r.Nodes) == 1 && r.Nodes[0].State == "running"
	}, 20*time.Second, 20*time.Millisecond, "v1's node never ran")

	_, v2 := e.register(`{"name":"pinned","nodes":[{"id":"fast1","handler":"noop"},{"id":"fast2","handler":"noop","depends_on":["fast1"]}]}`)
	require.Equal(t, 2, v2)
	r := e.pinnedRun(first)
	require.Equal(t, "running", r.Status, "v1's run was still running when v2 was registered")

	var versions struct {
		LatestVersion int `json:"latest_version"`
		Versions      []struct {
			Version int `json:"version"`
		} `json:"versions"`
	}
	e.must(req{method: "GET", path: "/workflows/" + name + "/versions"}, http.StatusOK).json(t, &versions)
	require.Equal(t, 2, versions.LatestVersion)
	require.Len(t, versions.Versions, 2)
	var doc struct {
		Version    int `json:"version"`
		Definition struct {
			Nodes []struct {
				ID string `json:"id"`
			} `json:"nodes"`
		} `json:"definition"`
	}
	e.must(req{method: "GET", path: "/workflows/" + name + "?version=1"}, http.StatusOK).json(t, &doc)
	require.Equal(t, 1, doc.Version)
	require.Equal(t, "slow", doc.Definition.Nodes[0].ID)
	var latest json.RawMessage
	e.must(req{method: "GET", path: "/workflows/" + name}, http.StatusOK).json(t, &latest)
	require.Contains(t, string(latest), `"fast2"`)
	e.must(req{method: "GET", path: "/workflows/" + name + "?version=3"}, http.StatusNotFound).problem(t)
	e.must(req{method: "GET", path: "/workflows/" + name + "?version=zero", malformed: true}, http.StatusBadRequest).problem(t)

	second := e.startRun(name, nil, nil)
	e.waitStatus(first, "succeeded", 30*time.Second)
	e.waitStatus(second, "succeeded", 30*time.Second)
	r = e.pinnedRun(first)
	require.Equal(t, 1, r.Version)
	require.Equal(t, []string{"slow"}, nodeIDs(r))
	r = e.pinnedRun(second)
	require.Equal(t, 2, r.Version)
	require.ElementsMatch(t, []string{"fast1", "fast2"}, nodeIDs(r))
}

// TestRunRequestsFollowVersionsRegisteredElsewhere: this api remembers each
// workflow's latest version, but a version registered (or a deletion made)
// through another api replica — here straight in Redis — is what the next
// run request uses: the pending write finds the remembered version stale and
// the request starts over.
func TestRunRequestsFollowVersionsRegisteredElsewhere(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	name, v1 := e.register(`{"name":"cached","inputs":{"n":{"type":"integer","default":1}},"nodes":[{"id":"a","handler":"noop"}]}`)
	first := e.startRun(name, nil, nil) // remembers version 1
	require.Equal(t, itoa(v1), e.rdb.HGet(t.Context(), e.keys.Run(first), records.FieldVersion).Val())

	v2, err := e.keys.RegisterWorkflow(t.Context(), e.rdb, name,
		[]byte(`{"name":"cached","inputs":{"who":{"type":"string","default":"z"}},"nodes":[{"id":"b","handler":"noop"}]}`), time.Now())
	require.NoError(t, err)
	second := e.startRun(name, nil, nil) // fits both versions: only the write's check tells
	require.Equal(t, itoa(v2), e.rdb.HGet(t.Context(), e.keys.Run(second), records.FieldVersion).Val())
	third := e.startRun(name, map[string]any{"input": map[string]any{"who": "bob"}}, nil) // fits version 2 only
	require.Equal(t, itoa(v2), e.rdb.HGet(t.Context(), e.keys.Run(third), records.FieldVersion).Val())

	require.NoError(t, e.keys.DeleteWorkflow(t.Context(), e.rdb, name, time.Now()))
	e.must(req{method: "POST", path: "/workflows/" + name + "/runs", body: map[string]any{"input": map[string]any{"who": "cy"}}},
		http.StatusNotFound).problem(t)
	runs, err := e.rdb.ZRange(t.Context(), e.keys.WorkflowRunShards(name)[0], 0, -1).Result()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{first, second, third}, runs, "a refused write left an index entry")
}
