package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScheduleCommands(t *testing.T) {
	t.Parallel()
	var created map[string]any
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"POST /schedules": func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			require.NoError(t, json.Unmarshal(b, &created))
			reply(http.StatusCreated, `{"id":"s1","workflow":"etl","cron":"@daily","timezone":"UTC","input":{},"enabled":true,
				"overlap":"skip","next_fire_at":"2026-03-02T00:00:00.000Z","created_at":"2026-03-01T00:00:00.000Z","updated_at":"2026-03-01T00:00:00.000Z"}`)(w, r)
		},
		"GET /schedules": reply(http.StatusOK, `{"items":[{"id":"s1","workflow":"etl","cron":"@daily","timezone":"Europe/Paris","input":{},
			"enabled":true,"overlap":"allow","next_fire_at":"2026-03-02T00:00:00.000Z","last_run_id":"s1.20260301T000000Z"}],"next_cursor":"abc"}`),
		"DELETE /schedules/s1": func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) },
	})
	env := api.env("k")

	r := braid(t, env, "", "schedule", "create", "etl", "--cron", "@daily", "--timezone", "Europe/Paris", "-i", "n=3", "--overlap", "allow")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "schedule s1 created")
	require.Equal(t, map[string]any{"workflow": "etl", "cron": "@daily", "timezone": "Europe/Paris",
		"input": map[string]any{"n": 3.0}, "enabled": true, "overlap": "allow"}, created)

	r = braid(t, env, "", "schedule", "create", "etl", "--cron", "@daily", "--disabled")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, false, created["enabled"])

	r = braid(t, env, "", "schedules")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "SCHEDULE")
	require.Contains(t, r.stdout, "s1.20260301T000000Z")
	require.Contains(t, r.stdout, "more: --cursor abc")
	r = braid(t, env, "", "schedules", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, json.Valid([]byte(r.stdout)))

	r = braid(t, env, "", "schedule", "delete", "s1")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "schedule s1 deleted")
	r = braid(t, env, "", "schedule", "delete", "nope")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "no route")

	r = braid(t, env, "", "schedule", "create", "etl")
	require.Equal(t, 2, r.code, "missing --cron is a usage error")
	require.True(t, strings.Contains(r.stderr, "cron"), r.stderr)
}

// TestScheduleEnableDisable: enable and disable PATCH only "enabled".
func TestScheduleEnableDisable(t *testing.T) {
	t.Parallel()
	var bodies []string
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"PATCH /schedules/s1": func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			bodies = append(bodies, string(b))
			if strings.Contains(string(b), "true") {
				reply(http.StatusOK, `{"id":"s1","workflow":"wf","cron":"@daily","timezone":"UTC","enabled":true,
					"overlap":"skip","next_fire_at":"2026-01-02T00:00:00.000Z","created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z"}`)(w, r)
				return
			}
			reply(http.StatusOK, `{"id":"s1","workflow":"wf","cron":"@daily","timezone":"UTC","enabled":false,
				"overlap":"skip","created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z"}`)(w, r)
		},
	})
	res := braid(t, api.env("k"), "", "schedule", "disable", "s1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "schedule s1 disabled\n", res.stdout)
	res = braid(t, api.env("k"), "", "schedule", "enable", "s1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, `^schedule s1 enabled; next fire 2026-01-0[12] \d\d:\d\d:\d\d\n$`, res.stdout)
	require.Equal(t, []string{`{"enabled":false}`, `{"enabled":true}`}, bodies)
	res = braid(t, api.env("k"), "", "schedule", "enable", "nosuch")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "no route PATCH /schedules/nosuch")
}
