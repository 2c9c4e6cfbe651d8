package apisvc_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type fanTask struct {
	Node     string          `json:"node"`
	Instance int             `json:"instance"`
	FanOut   bool            `json:"fan_out"`
	State    string          `json:"state"`
	Output   json.RawMessage `json:"output"`
	// OutputCut is set in place of an output longer than ?output_max.
	OutputCut *struct {
		Bytes int    `json:"bytes"`
		Head  string `json:"head"`
	} `json:"output_cut"`
	// QueueWaitMs and DurationMs are nil when absent.
	QueueWaitMs *int64 `json:"queue_wait_ms"`
	DurationMs  *int64 `json:"duration_ms"`
	Instances   *struct {
		Total, Pending, Running, Succeeded, Failed, Cancelled int
	} `json:"instances"`
	InstancePage *struct {
		Items      []fanTask `json:"items"`
		NextCursor string    `json:"next_cursor"`
	} `json:"instance_page"`
}

// TestFanOutViews runs a foreach of 5 instances under concurrency 2 and
// reads it through the API: the waiting reason while the cap is full, the
// instance counts, and pages of instances in /tasks and /tasks/{node}.
func TestFanOutViews(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true})
	name, _ := e.register(`{"name":"fan-view","nodes":[
	  {"id":"gen","handler":"noop","config":{"xs":["a","b","c","d","e"]}},
	  {"id":"each","handler":"simulate","depends_on":["gen"],"foreach":"<< gen.xs >>","concurrency":2,
	   "config":{"duration":"250ms","output":{"x":"<< item >>"}}}]}`)
	id := e.startRun(name, nil, nil)
	require.Eventually(t, func() bool {
		var v runView
		e.client.quiet(t, req{method: "GET", path: "/runs/" + id}).json(t, &v)
		return len(v.Nodes) == 2 && v.Nodes[1].WaitingReason == "node concurrency 2/2"
	}, 30*time.Second, 20*time.Millisecond, "the fan-out node never reported its full concurrency")
	e.waitStatus(id, "succeeded", 60*time.Second)

	var run struct {
		Nodes []fanTask `json:"nodes"`
	}
	e.must(req{method: "GET", path: "/runs/" + id}, http.StatusOK).json(t, &run)
	require.Nil(t, run.Nodes[0].Instances)
	require.NotNil(t, run.Nodes[1].Instances)
	require.Equal(t, 5, run.Nodes[1].Instances.Total)
	require.Equal(t, 5, run.Nodes[1].Instances.Succeeded)

	// /tasks: gen, each, each[0..4], three rows a page.
	var rows []fanTask
	path := "/runs/" + id + "/tasks?limit=3"
	for pages := 0; path != ""; pages++ {
		require.Less(t, pages, 5)
		var page struct {
			Items      []fanTask `json:"items"`
			NextCursor string    `json:"next_cursor"`
		}
		e.must(req{method: "GET", path: path}, http.StatusOK).json(t, &page)
		rows = append(rows, page.Items...)
		path = ""
		if page.NextCursor != "" {
			path = "/runs/" + id + "/tasks?limit=3&cursor=" + page.NextCursor
		}
	}
	require.Len(t, rows, 7)
	require.Equal(t, "gen", rows[0].Node)
	require.False(t, rows[1].FanOut)
	require.JSONEq(t, `[{"x":"a"},{"x":"b"},{"x":"c"},{"x":"d"},{"x":"e"}]`, string(rows[1].Output))
	for k, r := range rows[2:] {
		require.True(t, r.FanOut)
		require.Equal(t, k, r.Instance)
		require.Equal(t, "succeeded", r.State)
		require.JSONEq(t, `{"x":"`+string(rune('a'+k))+`"}`, string(r.Output))
		// Timings are lower bounds only: the machine may be busy.
		require.NotNil(t, r.QueueWaitMs, "instance %d has no queue_wait_ms", k)
		require.GreaterOrEqual(t, *r.QueueWaitMs, int64(0))
		require.NotNil(t, r.DurationMs, "instance %d has no duration_ms", k)
		require.GreaterOrEqual(t, *r.DurationMs, int64(250), "instance %d ran its 250 ms", k)
	}

	var node fanTask
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/each?limit=2"}, http.StatusOK).json(t, &node)
	require.Len(t, node.InstancePage.Items, 2)
	require.NotEmpty(t, node.InstancePage.NextCursor)
	var next fanTask
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/each?limit=4&cursor=" + node.InstancePage.NextCursor}, http.StatusOK).json(t, &next)
	require.Len(t, next.InstancePage.Items, 3)
	require.Equal(t, 2, next.InstancePage.Items[0].Instance)
	require.Empty(t, next.InstancePage.NextCursor)

	var one fanTask
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/each?instance=4"}, http.StatusOK).json(t, &one)
	require.JSONEq(t, `{"x":"e"}`, string(one.Output))
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/each?instance=5"}, http.StatusNotFound).problem(t)

	// ?output_max: an output longer than it comes as its length and head.
	var cut fanTask
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/each?limit=2&output_max=10"}, http.StatusOK).json(t, &cut)
	require.Nil(t, cut.Output, "the node's 51-byte array is cut")
	require.NotNil(t, cut.OutputCut)
	require.Equal(t, 51, cut.OutputCut.Bytes)
	require.Equal(t, `[{"x":"a"}`, cut.OutputCut.Head)
	require.Len(t, cut.InstancePage.Items, 2)
	require.JSONEq(t, `{"x":"a"}`, string(cut.InstancePage.Items[0].Output), "a 9-byte output comes whole")
	require.Nil(t, cut.InstancePage.Items[0].OutputCut)
	cut = fanTask{}
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/each?instance=4&output_max=5"}, http.StatusOK).json(t, &cut)
	require.Nil(t, cut.Output)
	require.Equal(t, 9, cut.OutputCut.Bytes)
	require.Equal(t, `{"x":`, cut.OutputCut.Head)
	cut = fanTask{}
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/each?output_max=51"}, http.StatusOK).json(t, &cut)
	require.Nil(t, cut.OutputCut, "an output of exactly output_max bytes comes whole")
	require.JSONEq(t, `[{"x":"a"},{"x":"b"},{"x":"c"},{"x":"d"},{"x":"e"}]`, string(cut.Output))
	for _, bad := range []string{"0", "-1", "x", "16777217"} {
		e.must(req{method: "GET", path: "/runs/" + id + "/tasks/each?output_max=" + bad, malformed: true}, http.StatusBadRequest).problem(t)
	}
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/gen?instance=1"}, http.StatusNotFound).problem(t)
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/each/logs?instance=3"}, http.StatusOK)
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/each/logs?instance=9"}, http.StatusNotFound).problem(t)
}

// TestNullOutputsReadAsNull: tasks that return nothing keep no output in
// Redis, yet the API shows each such succeeded node and fan-out instance
// with output null, as it did when null was stored, and a fan-out node's
// output holds a null per instance.
func TestNullOutputsReadAsNull(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true})
	name, _ := e.register(`{"name":"nulls","nodes":[
	  {"id":"a","handler":"noop"},
	  {"id":"f","handler":"noop","depends_on":["a"],"parallel":3}]}`)
	id := e.startRun(name, nil, nil)
	e.waitStatus(id, "succeeded", 60*time.Second)

	require.Equal(t, map[string]string{"f": `[null,null,null]`}, e.rdb.HGetAll(t.Context(), e.keys.Outputs(id)).Val(),
		"a's null output keeps no field")
	require.Empty(t, e.rdb.HGetAll(t.Context(), e.keys.InstanceOutputs(id, "f")).Val(), "nor do f's instances")

	var a fanTask
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/a"}, http.StatusOK).json(t, &a)
	require.Equal(t, "null", string(a.Output), "a succeeded with output null")
	var f fanTask
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/f"}, http.StatusOK).json(t, &f)
	require.JSONEq(t, `[null,null,null]`, string(f.Output))
	require.Len(t, f.InstancePage.Items, 3)
	for k, inst := range f.InstancePage.Items {
		require.Equal(t, "null", string(inst.Output), "instance %d", k)
	}
	var one fanTask
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/f?instance=2"}, http.StatusOK).json(t, &one)
	require.Equal(t, "null", string(one.Output))
}

// TestRunViewsReadNoOutputs: a view of a run (GET /runs/{id}, the answer
// of ?wait=) shows no outputs and does not read them — a run's outputs can
// be megabytes. With the run's outputs key turned into a string, so that
// any read of it as a hash fails, the view still answers; the task views,
// which show outputs, cannot.
func TestRunViewsReadNoOutputs(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true})
	name, _ := e.register(`{"name":"outs","nodes":[{"id":"a","handler":"noop","config":{"big":"x"}}]}`)
	id := e.startRun(name, nil, nil)
	e.waitStatus(id, "succeeded", 60*time.Second)
	ctx := t.Context()
	require.NoError(t, e.rdb.Del(ctx, e.keys.Outputs(id)).Err())
	require.NoError(t, e.rdb.Set(ctx, e.keys.Outputs(id), "not a hash", 0).Err())

	var v runView
	e.must(req{method: "GET", path: "/runs/" + id}, http.StatusOK).json(t, &v)
	require.Equal(t, "succeeded", v.Status)
	e.must(req{method: "GET", path: "/runs/" + id + "?wait=1s"}, http.StatusOK)
	// The sabotage works: the task view reads the outputs, finds no hash and fails.
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/a"}, http.StatusInternalServerError).problem(t)
}
