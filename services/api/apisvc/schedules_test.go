package apisvc_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/stretchr/testify/require"
)

// scheduleView is the subset of a schedule tests read.
type scheduleView struct {
	ID          string         `json:"id"`
	Workflow    string         `json:"workflow"`
	Cron        string         `json:"cron"`
	Timezone    string         `json:"timezone"`
	Input       map[string]any `json:"input"`
	Enabled     bool           `json:"enabled"`
	Overlap     string         `json:"overlap"`
	NextFireAt  string         `json:"next_fire_at"`
	LastRunID   string         `json:"last_run_id"`
	CreatedBy   string         `json:"created_by"`
	LastFireAt  string         `json:"last_fire_at"`
	LastSkipped string         `json:"last_skipped_at"`
}

const inputsWorkflow = `{"name":"%s","inputs":{"date":{"type":"string","required":true},"n":{"type":"integer","default":1}},
	"nodes":[{"id":"a","handler":"noop","config":{"d":"<< input.date >>"}}]}`

func (e *env) schedule(body any) scheduleView {
	e.t.Helper()
	var v scheduleView
	resp := e.must(req{method: "POST", path: "/schedules", body: body}, http.StatusCreated)
	resp.json(e.t, &v)
	require.Equal(e.t, "/schedules/"+v.ID, resp.Header.Get("Location"))
	return v
}

func TestScheduleCRUD(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	name, _ := e.register(strings.Replace(inputsWorkflow, "%s", "crud", 1))
	s := e.schedule(map[string]any{"workflow": name, "cron": "0 9 * * 1-5", "timezone": "Europe/Paris", "input": map[string]any{"date": "2026-01-01"}})
	require.Equal(t, "skip", s.Overlap, "default overlap")
	require.True(t, s.Enabled, "enabled by default")
	require.Equal(t, writeKey, s.CreatedBy)
	next, err := time.Parse(time.RFC3339, s.NextFireAt)
	require.NoError(t, err)
	paris, _ := time.LoadLocation("Europe/Paris")
	require.Equal(t, 9, next.In(paris).Hour(), "cron read in the schedule's time zone")

	var got scheduleView
	e.must(req{method: "GET", path: "/schedules/" + s.ID, key: readSecret}, http.StatusOK).json(t, &got)
	require.Equal(t, s, got)
	var list struct {
		Items []scheduleView `json:"items"`
	}
	e.must(req{method: "GET", path: "/schedules"}, http.StatusOK).json(t, &list)
	require.Len(t, list.Items, 1)

	// Changing the input keeps the timing; changing cron restarts it;
	// disabling drops the next fire.
	e.must(req{method: "PATCH", path: "/schedules/" + s.ID, body: map[string]any{"input": map[string]any{"date": "x", "n": 3}, "overlap": "allow"}}, http.StatusOK).json(t, &got)
	require.Equal(t, s.NextFireAt, got.NextFireAt)
	require.Equal(t, "allow", got.Overlap)
	require.EqualValues(t, 3, got.Input["n"])
	e.must(req{method: "PATCH", path: "/schedules/" + s.ID, body: map[string]any{"cron": "@every 1h", "timezone": "UTC"}}, http.StatusOK).json(t, &got)
	next, err = time.Parse(time.RFC3339, got.NextFireAt)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(time.Hour), next, time.Minute)
	got = scheduleView{}
	e.must(req{method: "PATCH", path: "/schedules/" + s.ID, body: map[string]any{"enabled": false}}, http.StatusOK).json(t, &got)
	require.False(t, got.Enabled)
	require.Empty(t, got.NextFireAt)

	// A read key may look but not touch.
	p := e.must(req{method: "PATCH", path: "/schedules/" + s.ID, key: readSecret, body: map[string]any{"enabled": true}}, http.StatusForbidden).problem(t)
	require.Contains(t, p.Detail, "write key")
	e.must(req{method: "POST", path: "/schedules", key: readSecret, body: map[string]any{"workflow": name, "cron": "@daily"}}, http.StatusForbidden)
	e.must(req{method: "DELETE", path: "/schedules/" + s.ID, key: readSecret}, http.StatusForbidden)

	e.must(req{method: "DELETE", path: "/schedules/" + s.ID}, http.StatusNoContent)
	e.must(req{method: "GET", path: "/schedules/" + s.ID}, http.StatusNotFound).problem(t)
	e.must(req{method: "DELETE", path: "/schedules/" + s.ID}, http.StatusNotFound).problem(t)
	e.must(req{method: "PATCH", path: "/schedules/" + s.ID, body: map[string]any{"enabled": true}}, http.StatusNotFound).problem(t)
	e.must(req{method: "GET", path: "/schedules/no-such-schedule"}, http.StatusNotFound).problem(t)
	e.must(req{method: "GET", path: "/schedules/bad%20id", malformed: true}, http.StatusBadRequest).problem(t)

	// The body a client sends (apiwire.NewSchedule, as the CLI does) is a
	// valid create; its answer decodes into apiwire.Schedule.
	var made apiwire.Schedule
	e.must(req{method: "POST", path: "/schedules", body: apiwire.NewSchedule{Workflow: name, Cron: "@daily",
		Input: json.RawMessage(`{"date":"2026-01-01"}`), Enabled: true}}, http.StatusCreated).json(t, &made)
	require.Equal(t, "UTC", made.Timezone, "default time zone")
	require.Equal(t, "skip", made.Overlap, "default overlap")
	require.False(t, made.NextFireAt.IsZero())
	require.False(t, made.CreatedAt.IsZero())
	require.True(t, made.LastFireAt.IsZero())
}

// TestScheduleBadInput checks every bad field is a 4xx problem naming its path.
func TestScheduleBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	name, _ := e.register(strings.Replace(inputsWorkflow, "%s", "badsched", 1))
	ok := map[string]any{"workflow": name, "cron": "@daily", "input": map[string]any{"date": "d"}}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for key, val := range ok {
			m[key] = val
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name   string
		body   any
		status int
		paths  []string
	}{
		{"bad cron", with("cron", "every day at 9"), 422, []string{"$.cron"}},
		{"six fields", with("cron", "0 0 9 * * *"), 422, []string{"$.cron"}},
		{"never fires", with("cron", "0 0 30 2 *"), 422, []string{"$.cron"}},
		{"every too short", with("cron", "@every 100ms"), 422, []string{"$.cron"}},
		{"bad timezone", with("timezone", "Mars/Olympus"), 422, []string{"$.timezone"}},
		{"bad overlap", with("overlap", "queue"), 422, []string{"$.overlap"}},
		{"unknown workflow", with("workflow", "nope"), 422, []string{"$.workflow"}},
		{"bad workflow name", with("workflow", "Not A Name"), 422, []string{"$.workflow"}},
		{"missing workflow and cron", map[string]any{"input": map[string]any{}}, 422, []string{"$.cron", "$.workflow"}},
		{"input missing required", with("input", map[string]any{}), 422, []string{"$.input.date"}},
		{"input wrong type", with("input", map[string]any{"date": "d", "n": "three"}), 422, []string{"$.input.n"}},
		{"input not an object", with("input", []int{1}), 422, []string{"$.input"}},
		{"enabled not a boolean", with("enabled", "yes"), 422, []string{"$.enabled"}},
		{"cron not a string", with("cron", 5), 422, []string{"$.cron"}},
		{"unknown field", with("every", "2s"), 422, []string{"$.every"}},
		{"all at once", map[string]any{"workflow": name, "cron": "x", "timezone": "Nowhere", "overlap": "no", "input": map[string]any{"date": 1}},
			422, []string{"$.cron", "$.overlap", "$.timezone", "$.input.date"}},
		{"wrong types and bad values at once", map[string]any{"workflow": name, "cron": "61 * * * *", "timezone": "Mars/Olympus", "overlap": "maybe", "enabled": "yes",
			"input": map[string]any{"date": "d"}}, 422, []string{"$.enabled", "$.overlap", "$.timezone", "$.cron"}},
		{"missing cron and a bad overlap", map[string]any{"workflow": name, "overlap": "x", "input": map[string]any{"date": "d"}}, 422, []string{"$.cron", "$.overlap"}},
		{"workflow of the wrong type and an unknown field", map[string]any{"workflow": 7, "cron": "@daily", "every": 1}, 422, []string{"$.workflow", "$.every"}},
		{"not an object", `["a"]`, 400, nil},
		{"not JSON", `{"workflow":`, 400, nil},
		{"empty", ``, 400, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.client.do(t, req{method: "POST", path: "/schedules", body: tc.body}, false)
			require.Equal(t, tc.status, resp.Status, "%s", resp.Body)
			p := resp.problem(t)
			var paths []string
			for _, fe := range p.Errors {
				paths = append(paths, fe.Path)
				require.NotEmpty(t, fe.Message)
			}
			require.ElementsMatch(t, tc.paths, paths, "%s", resp.Body)
		})
	}
	// PATCH is held to the same rules.
	s := e.schedule(ok)
	resp := e.client.do(t, req{method: "PATCH", path: "/schedules/" + s.ID, body: map[string]any{"cron": "61 * * * *", "overlap": "x"}}, false)
	require.Equal(t, 422, resp.Status)
	var paths []string
	for _, fe := range resp.problem(t).Errors {
		paths = append(paths, fe.Path)
	}
	require.ElementsMatch(t, []string{"$.cron", "$.overlap"}, paths)
}

// runsOf lists the ids of a workflow's runs (newest first, up to 500).
func (e *env) runsOf(name string) []string {
	e.t.Helper()
	var list struct {
		Items []struct {
			ID      string `json:"id"`
			Version int    `json:"version"`
		} `json:"items"`
	}
	e.client.quiet(e.t, req{method: "GET", path: "/runs?limit=500&workflow=" + name}).json(e.t, &list)
	out := make([]string, len(list.Items))
	for i, it := range list.Items {
		out[i] = it.ID
	}
	return out
}

// fireTime parses the fire time out of a scheduled run's id.
func fireTime(t *testing.T, scheduleID, run string) time.Time {
	t.Helper()
	stamp, ok := strings.CutPrefix(run, scheduleID+".")
	require.True(t, ok, "run %s is not of schedule %s", run, scheduleID)
	at, err := time.Parse("20060102T150405Z", stamp)
	require.NoError(t, err)
	return at
}

// firedAfter reports whether a run of schedule id fired after t.
func (e *env) firedAfter(name, id string, t time.Time) bool {
	for _, run := range e.runsOf(name) {
		if fireTime(e.t, id, run).After(t) {
			return true
		}
	}
	return false
}

// TestScheduleFiresThroughTheEngine drives a schedule over HTTP against a
// running orchestrator and worker: a PATCH makes it fire every 2 s, its
// runs succeed, disabling and deleting stop it.
func TestScheduleFiresThroughTheEngine(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true})
	name, _ := e.register(`{"name":"ticker","nodes":[{"id":"tick","handler":"noop","config":{"at":"<< run.id >>"}}]}`)
	s := e.schedule(map[string]any{"workflow": name, "cron": "@every 1h", "overlap": "allow"})
	require.Empty(t, e.runsOf(name))

	e.must(req{method: "PATCH", path: "/schedules/" + s.ID, body: map[string]any{"cron": "@every 2s"}}, http.StatusOK)
	// About one run per 2 s over ~7 s; generous bounds for a loaded machine.
	require.Never(t, func() bool { return len(e.runsOf(name)) > 5 }, 7*time.Second, 250*time.Millisecond)
	runs := e.runsOf(name)
	require.GreaterOrEqual(t, len(runs), 2, "runs %v", runs)
	require.LessOrEqual(t, len(runs), 5, "runs %v", runs)
	seen := map[time.Time]bool{}
	for _, run := range runs {
		at := fireTime(t, s.ID, run)
		require.False(t, seen[at], "two runs for fire time %s", at)
		seen[at] = true
		e.waitStatus(run, "succeeded", 30*time.Second)
	}
	var got scheduleView
	e.must(req{method: "GET", path: "/schedules/" + s.ID}, http.StatusOK).json(t, &got)
	require.NotEmpty(t, got.LastRunID)

	e.must(req{method: "PATCH", path: "/schedules/" + s.ID, body: map[string]any{"enabled": false}}, http.StatusOK)
	disabledAt := time.Now()
	require.Never(t, func() bool { return e.firedAfter(name, s.ID, disabledAt) }, 3*time.Second, 100*time.Millisecond,
		"a run fired after the schedule was disabled")

	e.must(req{method: "PATCH", path: "/schedules/" + s.ID, body: map[string]any{"enabled": true}}, http.StatusOK)
	enabledAt := time.Now().Truncate(time.Second)
	require.Eventually(t, func() bool { return e.firedAfter(name, s.ID, enabledAt) }, 15*time.Second, 100*time.Millisecond,
		"no run after re-enabling")

	e.must(req{method: "DELETE", path: "/schedules/" + s.ID}, http.StatusNoContent)
	deletedAt := time.Now()
	require.Never(t, func() bool { return e.firedAfter(name, s.ID, deletedAt) }, 3*time.Second, 100*time.Millisecond,
		"a run fired after the schedule was deleted")
}
