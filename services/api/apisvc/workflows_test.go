package apisvc_test

import (
	"net/http"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

const seed000 = "../../../examples/seed-000-example-workflow.json"

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestRegisterAndReadWorkflow(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	resp := e.must(req{method: "POST", path: "/workflows", body: readFile(t, seed000)}, http.StatusCreated)
	require.Equal(t, "/workflows/example_workflow", resp.Header.Get("Location"))
	name, v := e.register(readFile(t, seed000))
	require.Equal(t, "example_workflow", name)
	require.Equal(t, 2, v, "registering an existing name makes a new version")

	var wf struct {
		Name       string `json:"name"`
		Version    int    `json:"version"`
		Definition struct {
			Nodes []struct {
				ID        string   `json:"id"`
				Handler   string   `json:"handler"`
				DependsOn []string `json:"depends_on"`
			} `json:"nodes"`
		} `json:"definition"`
	}
	e.must(req{method: "GET", path: "/workflows/" + name}, http.StatusOK).json(t, &wf)
	require.Equal(t, 2, wf.Version)
	require.Len(t, wf.Definition.Nodes, 4)
	require.Equal(t, "shell", wf.Definition.Nodes[0].Handler, "seed format normalised")
	require.Equal(t, []string{"B", "C"}, wf.Definition.Nodes[3].DependsOn)

	var vl struct {
		LatestVersion int `json:"latest_version"`
		Versions      []struct {
			Version int `json:"version"`
		} `json:"versions"`
	}
	e.must(req{method: "GET", path: "/workflows/" + name + "/versions"}, http.StatusOK).json(t, &vl)
	require.Equal(t, 2, vl.LatestVersion)
	require.Len(t, vl.Versions, 2)
	require.Equal(t, 2, vl.Versions[0].Version)
	e.must(req{method: "GET", path: "/workflows/" + name + "/versions?version=1"}, http.StatusOK).json(t, &wf)
	require.Equal(t, 1, wf.Version)
	p := e.must(req{method: "GET", path: "/workflows/" + name + "/versions?version=9"}, http.StatusNotFound).problem(t)
	require.Contains(t, p.Detail, "no version 9")
}

func TestTemplatesStoredUnescaped(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	name, v := e.register(`{"name":"tmpl","nodes":[{"id":"a","handler":"noop"},{"id":"b","handler":"noop","depends_on":["a"],"config":{"x":"<< a >> & more"}}]}`)
	raw, _, err := e.keys.GetWorkflow(t.Context(), e.rdb, name, v)
	require.NoError(t, err)
	require.Contains(t, string(raw), `"<< a >> & more"`, "stored without HTML escaping")
}

func TestValidateWorkflow(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	var res struct {
		Valid    bool   `json:"valid"`
		Name     string `json:"name"`
		Problems []struct {
			Path    string `json:"path"`
			Message string `json:"message"`
		} `json:"problems"`
	}
	e.must(req{method: "POST", path: "/workflows/validate", body: readFile(t, seed000)}, http.StatusOK).json(t, &res)
	require.True(t, res.Valid)
	require.Equal(t, "example_workflow", res.Name)

	cyc := `{"name":"c","nodes":[{"id":"x","handler":"noop","depends_on":["z"]},{"id":"y","handler":"noop","depends_on":["x"]},{"id":"z","handler":"noop","depends_on":["y"]},{"id":"w","handler":"noop","depends_on":["nope"]}]}`
	e.must(req{method: "POST", path: "/workflows/validate", body: cyc}, http.StatusOK).json(t, &res)
	require.False(t, res.Valid)
	require.GreaterOrEqual(t, len(res.Problems), 2, "every problem is listed")
	e.must(req{method: "POST", path: "/workflows/validate", body: "{nope", malformed: true}, http.StatusOK).json(t, &res)
	require.False(t, res.Valid)
	n, err := e.rdb.Exists(t.Context(), e.keys.WorkflowMeta("c")).Result()
	require.NoError(t, err)
	require.Zero(t, n, "validate stores nothing")
}

func TestListWorkflowsPaginates(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	for i := range 7 {
		e.register(`{"name":"wf-` + itoa(i) + `","nodes":[{"id":"a","handler":"noop"}]}`)
	}
	seen := map[string]bool{}
	path := "/workflows?limit=3"
	for range 10 {
		var page struct {
			Items []struct {
				Name string `json:"name"`
			} `json:"items"`
			NextCursor string `json:"next_cursor"`
		}
		e.must(req{method: "GET", path: path, key: readSecret}, http.StatusOK).json(t, &page)
		for _, it := range page.Items {
			require.False(t, seen[it.Name], "%s listed twice", it.Name)
			seen[it.Name] = true
		}
		if page.NextCursor == "" {
			break
		}
		path = "/workflows?limit=3&cursor=" + page.NextCursor
	}
	require.Len(t, seen, 7)
}

func TestDeleteWorkflow(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	name, _ := e.register(`{"name":"gone","nodes":[{"id":"a","handler":"noop"}]}`)
	run := e.startRun(name, nil, nil)
	e.must(req{method: "DELETE", path: "/workflows/" + name}, http.StatusNoContent)
	e.must(req{method: "GET", path: "/workflows/" + name}, http.StatusNotFound).problem(t)
	e.must(req{method: "GET", path: "/workflows/" + name + "/versions"}, http.StatusNotFound).problem(t)
	e.must(req{method: "DELETE", path: "/workflows/" + name}, http.StatusNotFound).problem(t)
	p := e.must(req{method: "POST", path: "/workflows/" + name + "/runs"}, http.StatusNotFound).problem(t)
	require.Contains(t, p.Detail, `workflow "gone" not found`)
	e.must(req{method: "GET", path: "/runs/" + run}, http.StatusOK) // existing runs stay readable
	var list struct {
		Items []any `json:"items"`
	}
	e.must(req{method: "GET", path: "/workflows"}, http.StatusOK).json(t, &list)
	require.Empty(t, list.Items)

	_, v := e.register(`{"name":"gone","nodes":[{"id":"a","handler":"noop"}]}`)
	require.Equal(t, 2, v)
	e.must(req{method: "GET", path: "/workflows/" + name}, http.StatusOK)
	e.startRun(name, nil, nil)
}

// TestRegistrationCompilesTheStoredVersion: registering keeps the compiled
// version it stored, so that version's first run does not read and parse
// the definition again (a 10,000-node one takes about 80 ms). Shown by
// spoiling the stored copy after registration: the run is still accepted
// from what registration compiled.
func TestRegistrationCompilesTheStoredVersion(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	name, v := e.register(`{"name":"warm","nodes":[{"id":"a","handler":"noop"}]}`)
	require.NoError(t, e.rdb.HSet(t.Context(), e.keys.WorkflowVersions(name), strconv.Itoa(v), "{not json").Err())
	id := e.startRun(name, nil, nil)
	require.NotEmpty(t, id)
}
