package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestApplyPrintsNameAndVersion(t *testing.T) {
	t.Parallel()
	var body string
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"POST /workflows": func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			body = string(b)
			reply(http.StatusCreated, `{"name":"etl","version":2}`)(w, r)
		},
	})
	file := filepath.Join(t.TempDir(), "wf.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"etl","nodes":[]}`), 0o600))
	res := braid(t, api.env("k"), "", "apply", "-f", file)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "registered workflow etl version 2 (from "+file+")\n", res.stdout)
	require.Equal(t, `{"name":"etl","nodes":[]}`, body)
	require.Equal(t, []string{"k"}, api.keys)

	res = braid(t, api.env("k"), `{"name":"etl"}`, "apply", "-f", "-", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.JSONEq(t, `{"name":"etl","version":2}`, res.stdout)
	require.Empty(t, res.stderr)
}

// TestApplyUnchangedRegistersNothing: a definition the latest version
// already holds — in another layout and key order — registers nothing and
// says so; a changed one, one that does not
// parse, or one whose workflow is not registered is posted.
func TestApplyUnchangedRegistersNothing(t *testing.T) {
	t.Parallel()
	const stored = `{"name":"etl","nodes":[{"id":"a","handler":"shell","config":{"command":"echo hi"}},{"id":"b","handler":"noop","depends_on":["a"]}]}`
	var posts int
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"GET /workflows/etl": reply(http.StatusOK, `{"name":"etl","version":4,"definition":`+stored+`}`),
		"POST /workflows": func(w http.ResponseWriter, r *http.Request) {
			posts++
			var def struct{ Name string }
			_ = json.NewDecoder(r.Body).Decode(&def)
			reply(http.StatusCreated, `{"name":"`+def.Name+`","version":5}`)(w, r)
		},
	})
	same := `{
	  "nodes": [
	    {"handler": "shell", "id": "a", "config": {"command": "echo hi"}},
	    {"id": "b", "depends_on": ["a"], "handler": "noop"}
	  ],
	  "name": "etl"
	}`
	res := braid(t, api.env("k"), same, "apply", "-f", "-")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "workflow etl unchanged (version 4, from -)\n", res.stdout)
	require.Zero(t, posts)
	res = braid(t, api.env("k"), same, "apply", "-f", "-", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.JSONEq(t, `{"name":"etl","version":4,"unchanged":true}`, res.stdout)
	require.Zero(t, posts)

	for _, def := range []string{
		strings.Replace(same, "echo hi", "echo bye", 1), // changed
		strings.Replace(same, `"etl"`, `"other"`, 1),    // not registered: 404
		`{"name":"etl","nodes":[]}`,                     // does not parse: the api says why
	} {
		before := posts
		res = braid(t, api.env("k"), def, "apply", "-f", "-")
		require.Equal(t, 0, res.code, res.stderr)
		require.Contains(t, res.stdout, "registered workflow ", def)
		require.Equal(t, before+1, posts, def)
	}
}

// TestApplyPrintsWarnings: the api's warnings (a handler no live worker
// offers) go to standard error, the answer stays on standard output.
func TestApplyPrintsWarnings(t *testing.T) {
	t.Parallel()
	const warning = `no live worker offers handler "resize" (node a): its tasks will wait queued until a worker offering it starts; GET /workers lists what live workers offer`
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"POST /workflows": reply(http.StatusCreated, `{"name":"etl","version":3,"warnings":[`+strconv.Quote(warning)+`]}`),
	})
	res := braid(t, api.env("k"), `{"name":"etl"}`, "apply", "-f", "-")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "registered workflow etl version 3 (from -)\n", res.stdout)
	require.Equal(t, "warning: workflow etl: "+warning+"\n", res.stderr)

	res = braid(t, api.env("k"), `{"name":"etl"}`, "apply", "-f", "-", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.JSONEq(t, `{"name":"etl","version":3,"warnings":[`+strconv.Quote(warning)+`]}`, res.stdout)
	require.Equal(t, "warning: workflow etl: "+warning+"\n", res.stderr)
}

func TestProblemsArePrintedWithPaths(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"POST /workflows": reply(http.StatusUnprocessableEntity, `{"title":"Invalid workflow","status":422,
			"detail":"invalid workflow definition: 2 problems","errors":[{"path":"$.nodes[1].id","message":"duplicate id \"a\""},
			{"path":"$.nodes[0].depends_on[0]","message":"unknown node \"x\""}]}`),
	})
	res := braid(t, api.env("k"), `{}`, "apply", "-f", "-")
	require.Equal(t, 1, res.code)
	require.Equal(t, "error: invalid workflow definition: 2 problems\n"+
		"  $.nodes[1].id: duplicate id \"a\"\n"+
		"  $.nodes[0].depends_on[0]: unknown node \"x\"\n", res.stderr)
}

// TestALoneProblemIsNotPrintedTwice: a problem the detail already spells
// out (path and message) is not listed again; one it does not is.
func TestALoneProblemIsNotPrintedTwice(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"POST /schedules": reply(http.StatusUnprocessableEntity, `{"title":"Invalid schedule","status":422,
			"detail":"the schedule is invalid: $.cron: cron expression \"61 * * * *\" is invalid",
			"errors":[{"path":"$.cron","message":"cron expression \"61 * * * *\" is invalid"}]}`),
		"POST /workflows/w/runs": reply(http.StatusUnprocessableEntity, `{"title":"Invalid input","status":422,
			"detail":"the input does not fit workflow \"w\" version 1: unknown input \"bogus\"",
			"errors":[{"path":"$.input.bogus","message":"unknown input \"bogus\""}]}`),
	})
	res := braid(t, api.env("k"), "", "schedule", "create", "w", "--cron", "61 * * * *")
	require.Equal(t, 1, res.code)
	require.Equal(t, "error: the schedule is invalid: $.cron: cron expression \"61 * * * *\" is invalid\n", res.stderr)
	res = braid(t, api.env("k"), "", "run", "w", "-i", "bogus=1")
	require.Equal(t, 1, res.code)
	require.Equal(t, "error: the input does not fit workflow \"w\" version 1: unknown input \"bogus\"\n"+
		"  $.input.bogus: unknown input \"bogus\"\n", res.stderr, "the path is news: listed")
}

func TestAPIKeyResolution(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t, map[string]http.HandlerFunc{"GET /runs": reply(http.StatusOK, `{"items":[]}`)})
	dataDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dataDir, "api-key"), []byte("from-file\n"), 0o600))
	env := map[string]string{"BRAID_URL": api.URL, "BRAID_DATA_DIR": dataDir}
	require.Equal(t, 0, braid(t, env, "", "runs").code)
	env["BRAID_API_KEY"] = "from-env"
	require.Equal(t, 0, braid(t, env, "", "runs").code)
	require.Equal(t, 0, braid(t, env, "", "runs", "--api-key", "from-flag").code)
	require.Equal(t, []string{"from-file", "from-env", "from-flag"}, api.keys)
}

func TestRunsAndGetTables(t *testing.T) {
	t.Parallel()
	var query string
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"GET /runs": func(w http.ResponseWriter, r *http.Request) {
			query = r.URL.RawQuery
			reply(http.StatusOK, `{"items":[{"id":"r1","workflow":"wf","version":3,"status":"succeeded",
				"created_at":"2026-01-01T00:00:00.000Z","started_at":"2026-01-01T00:00:01.000Z",
				"finished_at":"2026-01-01T00:00:03.500Z"}],"next_cursor":"cur"}`)(w, r)
		},
		"GET /runs/r1": reply(http.StatusOK, `{"id":"r1","workflow":"wf","version":3,"status":"running",
			"nodes":[{"id":"a","state":"failed","attempt":2,"max_attempts":2,"queued_at":"2026-01-01T00:00:00.000Z",
			"started_at":"2026-01-01T00:00:01.000Z","finished_at":"2026-01-01T00:00:01.250Z","queue_wait_ms":1000,"duration_ms":250,
			"worker":"w-1","error":"shell: exit code 3",
			"past_attempts":[{"attempt":1,"outcome":"lost","worker":"w-0","queue_wait_ms":4200,"error":"lost: worker w-0 stopped responding"},
			{"attempt":1,"outcome":"lost","worker":"w-3","queue_wait_ms":5,"duration_ms":9000,"error":"lost: worker w-3 stopped responding"},
			{"attempt":1,"outcome":"failed","worker":"w-2","queue_wait_ms":3,"duration_ms":1500,"error":"shell: exit code 1"}]},
			{"id":"ok","state":"queued","attempt":1,"queue_wait_ms":0,"duration_ms":61000,"waiting_reason":"awaiting approval",
			"approval_message":"Ship \u001b[31mit?"},
			{"id":"b","state":"pending","waiting_reason":"waiting for parents: a"},
			{"id":"fan","state":"running","attempt":1,"max_attempts":1,
			"instances":{"total":10,"pending":4,"running":2,"succeeded":4,"failed":0,"cancelled":0}}]}`),
	})
	res := braid(t, api.env("k"), "", "runs", "--workflow", "wf", "--status", "succeeded", "--limit", "5")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "limit=5&status=succeeded&workflow=wf", query)
	require.Regexp(t, `(?m)^RUN\s+WORKFLOW\s+VERSION\s+STATUS\s+CREATED\s+DURATION$`, res.stdout)
	require.Regexp(t, `(?m)^r1\s+wf\s+3\s+succeeded\s+\S+ \S+\s+2\.5s$`, res.stdout)
	require.Contains(t, res.stdout, "more: --cursor cur")

	res = braid(t, api.env("k"), "", "get", "r1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, `(?m)^NODE\s+STATE\s+ATTEMPT\s+WAIT\s+DURATION\s+WORKER\s+DETAIL$`, res.stdout)
	require.Regexp(t, `(?m)^a\s+failed\s+2/2\s+1s\s+250ms\s+w-1\s+shell: exit code 3$`, res.stdout)
	require.Contains(t, res.stdout, "attempt history\n"+
		"  a attempt 1 lost (waited 4.2s, never started): lost: worker w-0 stopped responding\n"+
		"  a attempt 1 lost (waited 5ms, lost 9s after it started): lost: worker w-3 stopped responding\n"+
		"  a attempt 1 failed (waited 3ms, ran 1.5s): shell: exit code 1\n")
	require.Regexp(t, `(?m)^ok\s+queued\s+1\s+0s\s+1m1s\s+-\s+awaiting approval: "Ship \\x1b\[31mit\?"$`, res.stdout,
		"a zero wait is 0s, not absent; the approval's message quoted, no terminal escape let through")
	require.Regexp(t, `(?m)^b\s+pending\s+-\s+-\s+-\s+-\s+waiting for parents: a$`, res.stdout)
	require.Regexp(t, `(?m)^fan\s+running\s+1/1\s+-\s+-\s+-\s+10 instances: 4 succeeded, 2 running, 4 pending$`, res.stdout)

	res = braid(t, api.env("k"), "", "get", "r1", "--output", "json")
	require.Equal(t, 0, res.code)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &v), "--output json prints the API's JSON")
	require.Equal(t, "r1", v["id"])
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"run without workflow", []string{"run"}, "usage: braid run WORKFLOW"},
		{"bad output", []string{"runs", "-o", "yaml"}, `--output "yaml"`},
		{"unknown flag", []string{"runs", "--bogus"}, "unknown flag"},
		{"bad input pair", []string{"run", "wf", "--input", "novalue"}, "want key=value"},
		{"apply without file", []string{"apply"}, "-f FILE"},
		{"dev only what", []string{"dev", "--only", "api"}, `--only "api"`},
		{"dev no workers", []string{"dev", "--workers", "0"}, "--workers 0"},
		{"dev negative procs", []string{"dev", "--procs", "-1"}, "--procs -1"},
		{"logs needs node", []string{"logs", "r"}, "usage: braid logs RUN NODE"},
		{"watch and wait", []string{"run", "wf", "--watch", "--wait"}, "--watch and --wait exclude each other"},
		{"runs limit zero", []string{"runs", "--limit", "0"}, "--limit 0: list at least 1"},
		{"runs limit negative", []string{"runs", "--limit", "-1"}, "--limit -1: list at least 1"},
		{"workflows limit zero", []string{"workflows", "--limit", "0"}, "--limit 0: list at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := braid(t, map[string]string{"BRAID_URL": "http://127.0.0.1:1"}, "", tt.args...)
			require.Equal(t, 2, res.code, res.stderr)
			require.Contains(t, res.stderr, tt.want)
		})
	}
}

func TestDevProcs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		flag                      int
		env                       string
		cpus, wantFloor, wantCeil int
	}{
		{"half the CPUs, up to all", 0, "", 8, 4, 8},
		{"odd count rounds down", 0, "", 3, 1, 3},
		{"at least one", 0, "", 1, 1, 1},
		{"the flag wins, fixed", 3, "", 2, 3, 3},
		{"the flag wins over the environment", 2, "6", 8, 2, 2},
		{"the environment's, which the runtime applied", 0, "6", 6, 0, 0},
	}
	for _, tt := range tests {
		floor, ceiling := devProcs(tt.flag, tt.env, tt.cpus)
		require.Equal(t, [2]int{tt.wantFloor, tt.wantCeil}, [2]int{floor, ceiling}, tt.name)
	}
}

func TestDevGCPercent(t *testing.T) {
	t.Parallel()
	pct, ok := devGCPercentFor("")
	require.True(t, ok, "without GOGC braid dev sets its own")
	require.Equal(t, devGCPercent, pct)
	_, ok = devGCPercentFor("150")
	require.False(t, ok, "GOGC in the environment wins (the runtime applied it)")
	_, ok = devGCPercentFor("off")
	require.False(t, ok)
}

func TestDevBadHTTPAllow(t *testing.T) {
	t.Parallel()
	res := braid(t, map[string]string{"BRAID_HTTP_ALLOW": "10.0.0.0/33, ok.lan, *"}, "", "dev", "--data-dir", t.TempDir())
	require.Equal(t, 2, res.code, res.stderr)
	require.Contains(t, res.stderr, `BRAID_HTTP_ALLOW: entry "10.0.0.0/33": not a CIDR range`)
	require.Contains(t, res.stderr, `entry "*"`)
	require.NotContains(t, res.stderr, "ok.lan")
}

func TestDevBadRunRetention(t *testing.T) {
	t.Parallel()
	res := braid(t, map[string]string{"BRAID_RUN_RETENTION": "1w"}, "", "dev", "--data-dir", t.TempDir())
	require.Equal(t, 2, res.code, res.stderr)
	require.Contains(t, res.stderr, `BRAID_RUN_RETENTION="1w": want a duration of at least 1s like "36h", whole days like "7d", or "0" to keep every run`)
}

func TestConnectionErrorExitsOne(t *testing.T) {
	t.Parallel()
	res := braid(t, map[string]string{"BRAID_URL": "http://127.0.0.1:1", "BRAID_API_KEY": "k"}, "", "runs")
	require.Equal(t, 1, res.code)
	require.Regexp(t, `^error: GET /runs: `, res.stderr)
}

func TestCancelRetryAndLogs(t *testing.T) {
	t.Parallel()
	var hits []string
	var query string
	record := func(w http.ResponseWriter, r *http.Request) {
		hits = append(hits, r.Method+" "+r.URL.Path)
		w.WriteHeader(http.StatusAccepted)
	}
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"POST /runs/r1/cancel": record,
		"POST /runs/r1/retry":  record,
		"GET /runs/r1/tasks/a/logs": func(w http.ResponseWriter, r *http.Request) {
			query = r.URL.RawQuery
			reply(http.StatusOK, `{"lines":[{"stream":"stdout","line":"out 1"},
			{"stream":"stderr","line":"err 1"}]}`)(w, r)
		},
	})
	require.Equal(t, "cancel requested for run r1\n", braid(t, api.env("k"), "", "cancel", "r1").stdout)
	require.Equal(t, "retry requested for run r1\n", braid(t, api.env("k"), "", "retry", "r1").stdout)
	require.Equal(t, []string{"POST /runs/r1/cancel", "POST /runs/r1/retry"}, hits)
	res := braid(t, api.env("k"), "", "logs", "r1", "a")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "out 1\n", res.stdout)
	require.Equal(t, "err 1\n", res.stderr)
	require.Equal(t, "", query, "no --instance: the api's default (instance 0)")
	res = braid(t, api.env("k"), "", "logs", "r1", "a", "--instance", "7", "--attempt", "2")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "attempt=2&instance=7", query)
	res = braid(t, api.env("k"), "", "logs", "r1", "a", "--instance", "-1")
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, "--instance -1: want 0 or more")
}

// TestOutput: braid output prints a node's output as JSON (a fan-out node's
// array with one instance row asked for, not a page), one instance's with
// --instance, and fails with the node's state or error when it has none.
func TestOutput(t *testing.T) {
	t.Parallel()
	var query string
	answers := map[string]string{
		"limit=1":     `{"run_id":"r1","node":"a","state":"succeeded","output":{"total":3,"names":["x","y"]}}`,
		"instance=2":  `{"run_id":"r1","node":"a","instance":2,"state":"succeeded","output":null}`,
		"instance=3":  `{"run_id":"r1","node":"a","instance":3,"state":"failed","error":"shell: exit code 3"}`,
		"instance=4":  `{"run_id":"r1","node":"a","instance":4,"state":"running"}`,
		"instance=99": ``,
	}
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"GET /runs/r1/tasks/a": func(w http.ResponseWriter, r *http.Request) {
			query = r.URL.RawQuery
			body, ok := answers[query]
			if !ok || body == "" {
				problem(w, http.StatusNotFound, `node "a" of run "r1" has no instance 99`)
				return
			}
			reply(http.StatusOK, body)(w, r)
		},
	})
	res := braid(t, api.env("k"), "", "output", "r1", "a")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "limit=1", query)
	require.Equal(t, "{\n  \"total\": 3,\n  \"names\": [\n    \"x\",\n    \"y\"\n  ]\n}\n", res.stdout)

	res = braid(t, api.env("k"), "", "output", "r1", "a", "--instance", "2")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "instance=2", query)
	require.Equal(t, "null\n", res.stdout, "a null output is printed, not taken for a missing one")

	res = braid(t, api.env("k"), "", "output", "r1", "a", "--instance", "3")
	require.Equal(t, 1, res.code)
	require.Empty(t, res.stdout)
	require.Contains(t, res.stderr, "instance 3 of node a of run r1 is failed without an output: shell: exit code 3")

	res = braid(t, api.env("k"), "", "output", "r1", "a", "--instance", "4")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "instance 4 of node a of run r1 is running: no output")

	res = braid(t, api.env("k"), "", "output", "r1", "a", "--instance", "99")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "has no instance 99")

	res = braid(t, api.env("k"), "", "output", "r1", "a", "--instance", "3", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, `"error": "shell: exit code 3"`, "-o json prints the api's answer")

	res = braid(t, api.env("k"), "", "output", "r1")
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, "usage: braid output RUN NODE")
}

// TestRunWait starts a run with --wait: it asks GET /runs/{id}?wait= until
// the run has ended, prints how it ended and exits 0 only on success.
func TestRunWait(t *testing.T) {
	for _, tc := range []struct {
		status string
		code   int
	}{{"succeeded", 0}, {"failed", 1}} {
		t.Run(tc.status, func(t *testing.T) {
			states := newRunStates(runJSON("r1", "running", "running"), runJSON("r1", tc.status, tc.status))
			var waits []string
			var mu sync.Mutex
			f := newFakeAPI(t, map[string]http.HandlerFunc{
				"POST /workflows/wf/runs": reply(http.StatusAccepted, `{"run_id":"r1","workflow":"wf","version":1}`),
				"GET /runs/r1": func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					waits = append(waits, r.URL.Query().Get("wait"))
					mu.Unlock()
					states.handle(w, r)
				},
			})
			res := braid(t, f.env("k"), "", "run", "wf", "--wait")
			require.Equal(t, tc.code, res.code, "stderr: %s", res.stderr)
			require.Contains(t, res.stdout, "run r1 "+tc.status)
			require.Equal(t, 2, states.count(), "one GET while running, one that saw the end")
			mu.Lock()
			defer mu.Unlock()
			for _, w := range waits {
				require.Equal(t, waitRound.String(), w)
			}
		})
	}
}

// TestWorkflowsCommands: braid workflows lists a page, braid workflow get
// prints the definition alone (ready for braid apply -f) or the api's
// document with -o json, and braid workflow delete deletes.
func TestWorkflowsCommands(t *testing.T) {
	t.Parallel()
	var query string
	var deleted []string
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"GET /workflows": func(w http.ResponseWriter, r *http.Request) {
			query = r.URL.RawQuery
			reply(http.StatusOK, `{"items":[{"name":"wf","latest_version":3,"created_at":"2026-01-01T00:00:00.000Z",
				"updated_at":"2026-01-02T00:00:00.000Z"}],"next_cursor":"cur"}`)(w, r)
		},
		"GET /workflows/wf": func(w http.ResponseWriter, r *http.Request) {
			query = r.URL.RawQuery
			reply(http.StatusOK, `{"name":"wf","version":2,"definition":{"name":"wf","nodes":[{"id":"a","handler":"noop"}]}}`)(w, r)
		},
		"DELETE /workflows/wf": func(w http.ResponseWriter, r *http.Request) {
			deleted = append(deleted, r.URL.Path)
			w.WriteHeader(http.StatusNoContent)
		},
	})
	res := braid(t, api.env("k"), "", "workflows", "--limit", "1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "limit=1", query)
	require.Regexp(t, `(?m)^WORKFLOW\s+VERSION\s+REGISTERED\s+UPDATED$`, res.stdout)
	require.Regexp(t, `(?m)^wf\s+3\s+\S+ \S+\s+\S+ \S+$`, res.stdout)
	require.Contains(t, res.stdout, "more: --cursor cur")

	res = braid(t, api.env("k"), "", "workflow", "get", "wf", "--version", "2")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "version=2", query)
	var def map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &def), res.stdout)
	require.Equal(t, "wf", def["name"], "the definition alone, not the api's document")
	require.NotContains(t, def, "definition")

	res = braid(t, api.env("k"), "", "workflow", "get", "wf", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "", query, "no --version: the latest")
	require.Contains(t, res.stdout, `"definition": {`)

	res = braid(t, api.env("k"), "", "workflow", "delete", "wf")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "workflow wf deleted\n", res.stdout)
	require.Equal(t, []string{"/workflows/wf"}, deleted)

	res = braid(t, api.env("k"), "", "workflow", "delete", "nosuch")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "no route DELETE /workflows/nosuch")

	res = braid(t, api.env("k"), "", "workflow", "get", "wf", "--version", "-1")
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, "--version -1: want 1 or more")
}

// TestRunInputFileAndIdempotencyKey: --input-json @FILE and @- read the
// input, --input pairs still override it; --idempotency-key travels as the
// Idempotency-Key header and a replayed answer says so.
func TestRunInputFileAndIdempotencyKey(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies, keys []string
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"POST /workflows/wf/runs": func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies, keys = append(bodies, string(b)), append(keys, r.Header.Get("Idempotency-Key"))
			mu.Unlock()
			if r.Header.Get("Idempotency-Key") == "again" {
				w.Header().Set("Idempotent-Replayed", "true")
			}
			reply(http.StatusAccepted, `{"run_id":"r1","workflow":"wf","version":1}`)(w, r)
		},
	})
	file := filepath.Join(t.TempDir(), "in.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"date": "2026-01-01", "n": 2}`), 0o600))
	res := braid(t, api.env("k"), "", "run", "wf", "--input-json", "@"+file, "--input", "n=3")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "run r1 started (workflow wf)\n", res.stdout)
	res = braid(t, api.env("k"), `{"from": "stdin"}`, "run", "wf", "--input-json", "@-", "--idempotency-key", "again")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "run r1 already started with this idempotency key (workflow wf)\n", res.stdout)
	mu.Lock()
	require.Len(t, bodies, 2)
	require.JSONEq(t, `{"input": {"date": "2026-01-01", "n": 3}}`, bodies[0])
	require.JSONEq(t, `{"input": {"from": "stdin"}}`, bodies[1])
	require.Equal(t, []string{"", "again"}, keys)
	mu.Unlock()

	for _, tc := range []struct{ arg, stdin, want string }{
		{"@" + filepath.Join(t.TempDir(), "missing.json"), "", "no such file"},
		{"@-", "  ", "empty; want a JSON object"},
		{"@-", "[1]", "--input-json: want a JSON object"},
	} {
		res = braid(t, api.env("k"), tc.stdin, "run", "wf", "--input-json", tc.arg)
		require.Equal(t, 2, res.code, tc.arg)
		require.Contains(t, res.stderr, tc.want)
	}
	mu.Lock()
	require.Len(t, bodies, 2, "a bad input file sends nothing")
	mu.Unlock()
}

// TestRunControls: pause, resume, rerun --from, approve and reject (with a
// reason) reach their endpoints; rerun without --from is a usage error.
func TestRunControls(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var hits []string
	record := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits = append(hits, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(b)))
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"POST /runs/r1/pause": record, "POST /runs/r1/resume": record, "POST /runs/r1/rerun": record,
		"POST /runs/r1/cancel": record, "POST /runs/r1/tasks/gate/approve": record, "POST /runs/r1/tasks/gate/reject": record,
	})
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"pause", "r1"}, "pause requested for run r1\n"},
		{[]string{"resume", "r1"}, "resume requested for run r1\n"},
		{[]string{"rerun", "r1", "--from", "b"}, "rerun requested for run r1\n"},
		{[]string{"cancel", "r1", "--reason", "wrong input"}, "cancel requested for run r1\n"},
		{[]string{"approve", "r1", "gate"}, "approve requested for node gate of run r1\n"},
		{[]string{"reject", "r1", "gate", "--reason", "not today"}, "reject requested for node gate of run r1\n"},
	} {
		res := braid(t, api.env("k"), "", tc.args...)
		require.Equal(t, 0, res.code, "%v: %s", tc.args, res.stderr)
		require.Equal(t, tc.out, res.stdout)
	}
	mu.Lock()
	require.Equal(t, []string{
		"POST /runs/r1/pause", "POST /runs/r1/resume", "POST /runs/r1/rerun?from=b",
		`POST /runs/r1/cancel {"reason":"wrong input"}`,
		"POST /runs/r1/tasks/gate/approve", `POST /runs/r1/tasks/gate/reject {"reason":"not today"}`,
	}, hits)
	mu.Unlock()

	res := braid(t, api.env("k"), "", "rerun", "r1")
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, "--from is required")
	res = braid(t, api.env("k"), "", "approve", "r1")
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, "usage: braid approve RUN NODE")
	res = braid(t, api.env("k"), "", "approve", "r1", "other")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "no route POST /runs/r1/tasks/other/approve")
}
