package apisvc_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestSeed000EndToEnd registers the seed-000 example, runs it through a
// real orchestrator and worker, and reads its tasks, outputs and logs.
func TestSeed000EndToEnd(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true})
	name, _ := e.register(readFile(t, seed000))
	id := e.startRun(name, nil, nil)
	require.Regexp(t, `^[A-Za-z0-9_-]+$`, id)
	run := e.waitStatus(id, "succeeded", 60*time.Second)
	require.Len(t, run.Nodes, 4)
	for _, n := range run.Nodes {
		require.Equal(t, "succeeded", n.State, n.ID)
		require.Equal(t, "worker-0", n.Worker, n.ID)
		require.Empty(t, n.WaitingReason, n.ID)
	}

	var tasks struct {
		Items []struct {
			Node   string `json:"node"`
			State  string `json:"state"`
			Worker string `json:"worker"`
			Output struct {
				ExitCode int    `json:"exit_code"`
				Stdout   string `json:"stdout"`
			} `json:"output"`
		} `json:"items"`
	}
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks", key: readSecret}, http.StatusOK).json(t, &tasks)
	require.Len(t, tasks.Items, 4)
	for _, tk := range tasks.Items {
		require.Equal(t, "worker-0", tk.Worker, tk.Node)
		require.Equal(t, tk.Node+"\n", tk.Output.Stdout, tk.Node)
	}
	var one struct {
		Output json.RawMessage `json:"output"`
	}
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/D"}, http.StatusOK).json(t, &one)
	require.Contains(t, string(one.Output), `"stdout":"D\n"`)

	var logs struct {
		Attempt int `json:"attempt"`
		Lines   []struct {
			Stream string `json:"stream"`
			Line   string `json:"line"`
		} `json:"lines"`
	}
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/B/logs"}, http.StatusOK).json(t, &logs)
	require.Equal(t, 1, logs.Attempt)
	var text []string
	for _, l := range logs.Lines {
		text = append(text, l.Stream+":"+l.Line)
	}
	require.Contains(t, text, "stdout:B", "shell output lines are in the log")
	e.must(req{method: "GET", path: "/runs/" + id + "/tasks/B/logs?attempt=2"}, http.StatusNotFound).problem(t)

	var sums struct {
		Items []struct {
			ID          string `json:"id"`
			Status      string `json:"status"`
			RequestedBy string `json:"requested_by"`
		} `json:"items"`
	}
	e.must(req{method: "GET", path: "/runs?workflow=" + name + "&status=succeeded"}, http.StatusOK).json(t, &sums)
	require.Len(t, sums.Items, 1)
	require.Equal(t, writeKey, sums.Items[0].RequestedBy, "the key's name, never the key")
}

func TestFollowLogs(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true})
	dir := t.TempDir()
	name, _ := e.register(`{"name":"follow","nodes":[{"id":"talk","handler":"shell","config":{"command":"echo first; while [ ! -f ` + dir + `/go ]; do sleep 0.05; done; echo second"}}]}`)
	id := e.startRun(name, nil, nil)
	require.Eventually(t, func() bool {
		r := e.waitStatus(id, "running", 30*time.Second)
		return r.Nodes[0].State == "running"
	}, 30*time.Second, 50*time.Millisecond)
	resp := e.client.stream(t, req{method: "GET", path: "/runs/" + id + "/tasks/talk/logs?follow=true"})
	events := newSSEReader(resp.Body)
	ev := events.next(t, 30*time.Second)
	require.Equal(t, "line", ev.event)
	require.Contains(t, ev.data, `"line":"first"`)
	require.NoError(t, touch(dir+"/go"))
	ev = events.next(t, 30*time.Second)
	require.Equal(t, "line", ev.event)
	require.Contains(t, ev.data, `"line":"second"`)
	ev = events.next(t, 30*time.Second)
	require.Equal(t, "end", ev.event)
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	name, _ := e.register(`{"name":"idem","inputs":{"n":{"type":"integer"}},"nodes":[{"id":"a","handler":"noop"}]}`)
	h := map[string]string{"Idempotency-Key": "order-42"}
	first := e.startRun(name, map[string]any{"input": map[string]any{"n": 1}}, h)
	resp := e.must(req{method: "POST", path: "/workflows/" + name + "/runs", body: `{"input": {"n": 1}}`, header: h}, http.StatusAccepted)
	require.Equal(t, "true", resp.Header.Get("Idempotent-Replayed"))
	var acc struct {
		RunID string `json:"run_id"`
	}
	resp.json(t, &acc)
	require.Equal(t, first, acc.RunID, "a repeated key returns the same run")
	alias := e.must(req{method: "POST", path: "/workflows/" + name + "/run", body: `{"input":{"n":1}}`, header: h}, http.StatusAccepted)
	alias.json(t, &acc)
	require.Equal(t, first, acc.RunID)

	p := e.must(req{method: "POST", path: "/workflows/" + name + "/runs", body: `{"input": {"n": 2}}`, header: h}, http.StatusUnprocessableEntity).problem(t)
	require.Contains(t, p.Detail, "different input")
	other := e.startRun(name, map[string]any{"input": map[string]any{"n": 1}}, map[string]string{"Idempotency-Key": "order-43"})
	require.NotEqual(t, first, other)
	require.NotEqual(t, first, e.startRun(name, nil, nil), "no key: a new run every time")
	n, err := e.rdb.ZCard(t.Context(), e.keys.WorkflowRunShards(name)[0]).Result()
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
}

func TestPendingRunRecord(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	name, v := e.register(`{"name":"pend","inputs":{"who":{"type":"string","default":"x"}},"nodes":[{"id":"a","handler":"noop"},{"id":"b","handler":"noop","depends_on":["a"]}]}`)
	id := e.startRun(name, map[string]any{"input": map[string]any{"who": "ann"}}, nil)
	f, err := e.rdb.HGetAll(t.Context(), e.keys.Run(id)).Result()
	require.NoError(t, err)
	require.Equal(t, "pending", f[records.FieldStatus])
	require.Equal(t, name, f[records.FieldWorkflow])
	require.Equal(t, itoa(v), f[records.FieldVersion])
	require.JSONEq(t, `{"who":"ann"}`, f[records.FieldInput])
	require.Equal(t, writeKey, f[records.FieldRequestedBy])
	for _, key := range []string{e.keys.AllRunShards()[0], e.keys.WorkflowRunShards(name)[0], e.keys.ActiveRunShards()[0]} {
		require.NoError(t, e.rdb.ZScore(t.Context(), key, id).Err(), key)
	}
	run := e.waitStatus(id, "pending", time.Second)
	require.Equal(t, "run not started yet: waiting for the orchestrator", run.Nodes[1].WaitingReason)
}

func TestListRunsFiltersAndPages(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	a, _ := e.register(`{"name":"list-a","nodes":[{"id":"a","handler":"noop"}]}`)
	b, _ := e.register(`{"name":"list-b","nodes":[{"id":"a","handler":"noop"}]}`)
	var ids []string
	for i := range 9 {
		wf := a
		if i%3 == 0 {
			wf = b
		}
		ids = append(ids, e.startRun(wf, nil, nil))
	}
	// Mark some runs failed, as the orchestrator would.
	for _, id := range ids[:4] {
		require.NoError(t, e.rdb.HSet(t.Context(), e.keys.Run(id), records.FieldStatus, "failed").Err())
	}
	all := pageAll(t, e, "/runs?limit=2")
	require.Len(t, all, 9)
	for i := range all {
		require.Equal(t, ids[len(ids)-1-i], all[i], "newest first")
	}
	require.Len(t, pageAll(t, e, "/runs?workflow="+b+"&limit=2"), 3)
	require.Len(t, pageAll(t, e, "/runs?status=failed&limit=3"), 4)
	require.Len(t, pageAll(t, e, "/runs?status=pending,failed&limit=4"), 9)
	require.Len(t, pageAll(t, e, "/runs?workflow="+a+"&status=failed"), 2)
	require.Empty(t, pageAll(t, e, "/runs?workflow=never-registered"))
}

// TestListUnfinishedRunsBehindManyFinished: the runs still going are
// found on the first page however many finished runs came after them
// (?status= of unfinished statuses reads the active-runs index), and a
// failed run behind 1,200 newer ones on the first page of ?status=failed
// (a filtered page reads up to 10,000 index entries, 250 at a time; it
// read 20 batches of its limit and ended empty).
func TestListUnfinishedRunsBehindManyFinished(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	a, _ := e.register(`{"name":"busy-a","nodes":[{"id":"a","handler":"noop"}]}`)
	b, _ := e.register(`{"name":"busy-b","nodes":[{"id":"a","handler":"noop"}]}`)
	older := []string{e.startRun(a, nil, nil), e.startRun(b, nil, nil), e.startRun(a, nil, nil)} // pending, active
	// 1,200 newer runs that finished, as the orchestrator leaves them.
	ctx := t.Context()
	pipe := e.rdb.Pipeline()
	base := time.Now().Add(time.Minute).UnixMilli()
	for i := range 1200 {
		id := fmt.Sprintf("done-%04d", i)
		ms := base + int64(i)
		pipe.HSet(ctx, e.keys.Run(id), records.FieldWorkflow, a, records.FieldVersion, "1", records.FieldStatus, "succeeded",
			records.FieldCreated, strconv.FormatInt(ms, 10))
		pipe.ZAdd(ctx, e.keys.AllRunsOf(id), redis.Z{Score: float64(ms), Member: id})
		pipe.ZAdd(ctx, e.keys.WorkflowRunsOf(a, id), redis.Z{Score: float64(ms), Member: id})
	}
	// A failed run older than all of them, and 9,000 more finished runs
	// older still (the scan's budget is the latest 10,000 runs).
	failedAt := time.Now().Add(-time.Minute).UnixMilli()
	pipe.HSet(ctx, e.keys.Run("failed-0"), records.FieldWorkflow, a, records.FieldVersion, "1", records.FieldStatus, "failed",
		records.FieldCreated, strconv.FormatInt(failedAt, 10))
	pipe.ZAdd(ctx, e.keys.AllRunsOf("failed-0"), redis.Z{Score: float64(failedAt), Member: "failed-0"})
	for i := range 9000 {
		id := fmt.Sprintf("old-%04d", i)
		pipe.ZAdd(ctx, e.keys.AllRunsOf(id), redis.Z{Score: float64(failedAt - 1 - int64(i)), Member: id})
		pipe.HSet(ctx, e.keys.Run(id), records.FieldWorkflow, a, records.FieldStatus, "succeeded")
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)

	first := func(path string) []string {
		t.Helper()
		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		e.must(req{method: "GET", path: path, key: readSecret}, http.StatusOK).json(t, &page)
		var ids []string
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		return ids
	}
	trips := testinfra.CountTrips(e.rdb)
	require.Equal(t, []string{older[2], older[1], older[0]}, first("/runs?status=pending&limit=5"), "newest first")
	require.LessOrEqual(t, trips.Load(), int64(4), "unfinished runs come from the active index, not after 1,200 finished ones (5 batches, 10 round trips)")
	require.Equal(t, []string{older[2], older[0]}, first("/runs?status=pending,running&workflow="+a+"&limit=5"))
	require.Equal(t, []string{older[2], older[1]}, pageAll(t, e, "/runs?status=pending&limit=1")[:2], "the cursor pages the same index")
	require.Len(t, pageAll(t, e, "/runs?status=pending&limit=2"), 3)
	require.Len(t, first("/runs?status=succeeded&limit=5"), 5)
	// A status few runs are in is looked for among the latest 10,000.
	trips.Store(0)
	require.Equal(t, []string{"failed-0"}, first("/runs?status=failed&limit=5"))
	require.LessOrEqual(t, trips.Load(), int64(2*(10000/250+1)), "a filtered page reads 250 entries per round trip pair")
	var page struct {
		Items      []json.RawMessage `json:"items"`
		NextCursor string            `json:"next_cursor"`
	}
	e.must(req{method: "GET", path: "/runs?status=cancelled&limit=5", key: readSecret}, http.StatusOK).json(t, &page)
	require.Empty(t, page.Items)
	require.NotEmpty(t, page.NextCursor, "a page that read its budget without reaching the index's end says where to go on")
	require.Len(t, pageAll(t, e, "/runs?status=failed&limit=5"), 1)
}

// pageAll follows next_cursor and returns every run id listed.
func pageAll(t *testing.T, e *env, path string) []string {
	t.Helper()
	var out []string
	sep := "&"
	if !strings.Contains(path, "?") {
		sep = "?"
	}
	next := path
	for range 50 {
		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
			NextCursor string `json:"next_cursor"`
		}
		e.must(req{method: "GET", path: next, key: readSecret}, http.StatusOK).json(t, &page)
		for _, it := range page.Items {
			out = append(out, it.ID)
		}
		if page.NextCursor == "" {
			return out
		}
		next = path + sep + "cursor=" + page.NextCursor
	}
	t.Fatalf("%s: more than 50 pages", path)
	return nil
}

// TestRunRequestWithoutBroker checks that a run the event bus did not
// acknowledge is a 503 and leaves nothing behind, so a retry is clean.
func TestRunRequestWithoutBroker(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{timeout: 3 * time.Second})
	name, _ := e.register(`{"name":"nobus","nodes":[{"id":"a","handler":"noop"}]}`)
	e.kafka.Stop()
	h := map[string]string{"Idempotency-Key": "k1"}
	p := e.must(req{method: "POST", path: "/workflows/" + name + "/runs", header: h}, http.StatusServiceUnavailable).problem(t)
	require.Contains(t, p.Detail, "did not acknowledge")
	for _, key := range []string{e.keys.AllRunShards()[0], e.keys.WorkflowRunShards(name)[0], e.keys.ActiveRunShards()[0]} {
		require.Zero(t, e.rdb.ZCard(t.Context(), key).Val(), key)
	}
	keys, err := e.rdb.Keys(t.Context(), statestore.Prefix+e.keys.Namespace+"{*}:run").Result()
	require.NoError(t, err)
	require.Empty(t, keys, "the pending run record is deleted")
	require.Zero(t, e.rdb.Exists(t.Context(), e.keys.Idempotency(name, "k1")).Val(), "the idempotency key is released")
	p = e.must(req{method: "GET", path: "/readyz", key: "-"}, http.StatusServiceUnavailable).problem(t)
	require.Equal(t, "kafka", p.Errors[0].Path)
}

// TestRunEventsWithoutBroker: a run's event stream whose feed cannot be
// opened (the broker is down) is a 503 problem, not a stream without live
// updates, and /readyz names the feed as well as Kafka.
func TestRunEventsWithoutBroker(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{timeout: 3 * time.Second})
	name, _ := e.register(`{"name":"nofeed","nodes":[{"id":"a","handler":"noop"}]}`)
	id := e.startRun(name, nil, nil)
	e.kafka.Stop()
	// First without reading the body: a stream answered 200 never ends.
	hr, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.url+"/runs/"+id+"/events", nil)
	require.NoError(t, err)
	hr.Header.Set("X-API-Key", readSecret)
	start := time.Now()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(hr)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a stream without its feed")
	require.Less(t, time.Since(start), 30*time.Second)
	p := e.must(req{method: "GET", path: "/runs/" + id + "/events", key: readSecret}, http.StatusServiceUnavailable).problem(t)
	require.Contains(t, p.Detail, "live run events are unavailable")
	p = e.must(req{method: "GET", path: "/readyz", key: "-"}, http.StatusServiceUnavailable).problem(t)
	var failed []string
	for _, fe := range p.Errors {
		failed = append(failed, fe.Path)
	}
	require.ElementsMatch(t, []string{"kafka", "events"}, failed)
}
