package apisvc_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// headerCases are bad headers: Content-Type, Accept, Last-Event-ID,
// credentials and Idempotency-Key.
func headerCases(run string) []badCase {
	with := func(name, method, path, body string, h map[string]string, status int, detail string) badCase {
		return badCase{name, req{method: method, path: path, body: body, header: h, malformed: true}, status, detail}
	}
	wf := `{"name":"h","nodes":[{"id":"a","handler":"noop"}]}`
	ct := func(v string) map[string]string { return map[string]string{"Content-Type": v} }
	accept := func(v string) map[string]string { return map[string]string{"Accept": v} }
	lastID := func(v string) map[string]string { return map[string]string{"Last-Event-ID": v} }
	events := "/runs/" + run + "/events"
	return []badCase{
		with("content type without subtype", "POST", "/workflows", wf, ct("application"), 415, "Content-Type"),
		with("content type with broken parameter", "POST", "/workflows", wf, ct("application/json; charset"), 415, "Content-Type"),
		with("multipart content type", "POST", "/workflows", wf, ct("multipart/form-data; boundary=x"), 415, "Content-Type"),
		with("html content type", "POST", "/workflows/validate", wf, ct("text/html"), 415, "Content-Type"),
		with("octet-stream run body", "POST", "/workflows/bad/runs", `{}`, ct("application/octet-stream"), 415, "Content-Type"),
		with("yaml schedule", "POST", "/schedules", `workflow: bad`, ct("application/yaml"), 415, "Content-Type"),
		with("xml control body", "POST", "/runs/"+run+"/resume", `<x/>`, ct("application/xml"), 415, "Content-Type"),
		with("Accept html on a missing run", "GET", "/runs/no-such-run", "", accept("text/html"), 404, "not found"),
		with("Accept xml on bad JSON", "POST", "/workflows", `{"name":`, accept("application/xml"), 400, "invalid"),
		with("Accept garbage", "GET", "/workflows/Bad", "", accept(";;;q=x, */"), 400, "workflow name"),
		with("Accept event-stream on a list", "GET", "/runs?limit=0", "", accept("text/event-stream"), 400, "limit"),
		with("Last-Event-ID negative", "GET", events, "", lastID("-1"), 400, "Last-Event-ID"),
		with("Last-Event-ID fraction", "GET", events, "", lastID("1.5"), 400, "Last-Event-ID"),
		with("Last-Event-ID overflow", "GET", events, "", lastID("99999999999999999999999"), 400, "Last-Event-ID"),
		with("Last-Event-ID hex", "GET", events, "", lastID("0x10"), 400, "Last-Event-ID"),
		with("Last-Event-ID arabic digits", "GET", events, "", lastID("٣"), 400, "Last-Event-ID"),
		with("Idempotency-Key not ASCII", "POST", "/workflows/bad/runs", `{"input":{"n":1}}`, map[string]string{"Idempotency-Key": "ключ"}, 400, "Idempotency-Key"),
		with("Idempotency-Key of 256", "POST", "/workflows/bad/runs", `{"input":{"n":1}}`, map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}, 400, "Idempotency-Key"),
		{"wrong key", req{method: "GET", path: "/workflows", key: "not-the-key", malformed: true}, 401, "invalid API key"},
		{"no key", req{method: "GET", path: "/runs", key: "-", malformed: true}, 401, "missing API key"},
		{"basic auth", req{method: "GET", path: "/workers", key: "-", header: map[string]string{"Authorization": "Basic YWRtaW46eA=="}, malformed: true}, 401, "missing API key"},
		{"empty bearer", req{method: "GET", path: "/workers", key: "-", header: map[string]string{"Authorization": "Bearer "}, malformed: true}, 401, "missing API key"},
		{"key not ASCII", req{method: "GET", path: "/schedules", key: "ключ", malformed: true}, 401, "invalid API key"},
		{"read key writes", req{method: "POST", path: "/workflows", key: readSecret, body: wf, malformed: true}, 403, "role read"},
		{"read key cancels", req{method: "POST", path: "/runs/" + run + "/cancel", key: readSecret, malformed: true}, 403, "role read"},
	}
}

// pathCases are unicode, NUL and other odd bytes in paths.
func pathCases(run string) []badCase {
	get := func(name, path string, status int, detail string) badCase {
		return badCase{name, req{method: "GET", path: path, malformed: true}, status, detail}
	}
	r := "/runs/" + run
	return []badCase{
		get("NUL run id", "/runs/%00", 400, "run id"),
		get("NUL in run id events", "/runs/a%00b/events", 400, "run id"),
		get("newline in run id", "/runs/a%0Ab", 400, "run id"),
		get("invalid UTF-8 run id", "/runs/%FF%FE", 400, "run id"),
		get("emoji run id", "/runs/%F0%9F%92%A5", 400, "run id"),
		get("dot-dot run id", "/runs/..%2F..%2Fetc", 404, "no endpoint"),
		get("NUL workflow name", "/workflows/%00", 400, "workflow name"),
		get("accented workflow name", "/workflows/%C3%A9t%C3%A9", 400, "workflow name"),
		get("NUL in versions", "/workflows/a%00/versions", 400, "workflow name"),
		get("unicode layout", "/workflows/%E2%9C%93/layout", 400, "workflow name"),
		get("NUL node id", r+"/tasks/%00", 400, "node id"),
		get("emoji node logs", r+"/tasks/%F0%9F%92%A5/logs", 400, "node id"),
		get("NUL schedule id", "/schedules/%00", 400, "schedule id"),
		get("unicode schedule id", "/schedules/%D1%8F", 400, "schedule id"),
		get("NUL route", "/%00", 404, "no endpoint"),
		get("unicode route", "/%E2%98%83", 404, "no endpoint"),
		get("encoded slash in name", "/workflows/a%2Fb", 404, "no endpoint"),
		get("UI path escape", "/ui/..%2F..%2Fetc%2Fpasswd", 404, "no UI file"),
		get("UI NUL", "/ui/%00", 404, "no UI file"),
		{"NUL workflow run", req{method: "POST", path: "/workflows/%00/runs", malformed: true}, 400, "workflow name"},
		{"unicode approve", req{method: "POST", path: r + "/tasks/%C3%A9/approve", malformed: true}, 400, "node id"},
		{"NUL delete", req{method: "DELETE", path: "/workflows/%00", malformed: true}, 400, "workflow name"},
		{"NUL cancel", req{method: "POST", path: "/runs/%00/cancel", malformed: true}, 400, "run id"},
	}
}

// methodCases are methods an endpoint does not take.
func methodCases(run string) []badCase {
	call := func(method, path string) badCase {
		return badCase{method + " " + path, req{method: method, path: path, malformed: true}, 405, "not allowed"}
	}
	r := "/runs/" + run
	return []badCase{
		call("PATCH", "/workflows"), call("PUT", "/workflows/bad"), call("POST", "/workflows/bad"),
		call("DELETE", "/workflows/bad/versions"), call("PUT", "/workflows/bad/runs"), call("DELETE", "/runs"),
		call("POST", "/runs"), call("PATCH", r), call("POST", r+"/events"), call("PUT", r+"/tasks"),
		call("DELETE", r+"/tasks/a/logs"), call("GET", r+"/retry"), call("GET", r+"/tasks/a/approve"),
		call("PUT", "/schedules"), call("POST", "/schedules/x"), call("POST", "/workers"),
		call("POST", "/healthz"), call("DELETE", "/metrics"), call("POST", "/openapi.json"),
		call("PUT", "/ui/index.html"), call("OPTIONS", "/workflows"), call("TRACE", "/runs"),
		call("BREW", "/workflows"), call("POST", "/whoami"),
	}
}

// deep nests n arrays.
func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// bodyCases are odd and oversized JSON bodies: deep nesting, NUL and
// invalid UTF-8, a BOM, huge numbers, and the run input limit.
func bodyCases(run string) []badCase {
	post := func(name, path, body string, status int, detail string) badCase {
		return badCase{name, req{method: "POST", path: path, body: body, malformed: true}, status, detail}
	}
	runs := "/workflows/bad/runs"
	bigInput := `{"input":{"n":1,"s":"` + strings.Repeat("x", 600<<10) + `"}}`
	manyKeys := make([]string, 40000)
	for i := range manyKeys {
		manyKeys[i] = `"k` + itoa(i) + `":1`
	}
	return []badCase{
		post("definition nested 100000 deep", "/workflows", deep(100000), 400, "invalid"),
		post("config nested 20000 deep", "/workflows", `{"name":"d","nodes":[{"id":"a","handler":"noop","config":`+deep(20000)+`}]}`, 400, "invalid"),
		post("run input nested 20000 deep", runs, `{"input":{"n":1,"x":`+deep(20000)+`}}`, 400, "invalid JSON body"),
		post("run input objects 20000 deep", runs, `{"input":`+strings.Repeat(`{"a":`, 20000)+`1`+strings.Repeat("}", 20000)+`}`, 400, "invalid JSON body"),
		post("cancel reason nested", "/runs/"+run+"/cancel", `{"reason":`+deep(20000)+`}`, 400, "invalid JSON body"),
		post("schedule input nested", "/schedules", `{"workflow":"bad","cron":"@daily","input":`+deep(20000)+`}`, 400, "invalid JSON body"),
		post("raw NUL in body", "/workflows", "{\x00}", 400, "invalid"),
		post("BOM before JSON", "/workflows", "\xef\xbb\xbf"+`{"name":"d","nodes":[{"id":"a","handler":"noop"}]}`, 400, "invalid"),
		post("invalid UTF-8 name", "/workflows", `{"name":"`+"\xff\xfe"+`","nodes":[{"id":"a","handler":"noop"}]}`, 422, "name"),
		post("escaped NUL in name", "/workflows", `{"name":"a\u0000b","nodes":[{"id":"a","handler":"noop"}]}`, 422, "name"),
		post("escaped NUL in node id", "/workflows", `{"name":"d","nodes":[{"id":"a\u0000","handler":"noop"}]}`, 422, "a"),
		post("huge integer input", runs, `{"input":{"n":1e999999}}`, 422, `input "n" must be an integer`),
		post("parallel over the fan-out limit", "/workflows", `{"name":"d","nodes":[{"id":"a","handler":"noop","parallel":1000001}]}`, 422, "the limit is 1000000"),
		post("run input over 512 KiB", runs, bigInput, 422, "a run input may be at most 524288"),
		post("run input of 40000 keys", runs, `{"input":{`+strings.Join(manyKeys, ",")+`}}`, 422, "40001 problems"),
		post("number as body", runs, `123456789012345678901234567890`, 400, "an object"),
	}
}

// scheduleCases are bad requests on the schedule endpoints.
func scheduleCases(id string) []badCase {
	do := func(name, method, path, body string, status int, detail string) badCase {
		return badCase{name, req{method: method, path: path, body: body, malformed: true}, status, detail}
	}
	s := "/schedules/" + id
	return []badCase{
		do("get unknown schedule", "GET", "/schedules/nope", "", 404, "not found"),
		do("patch unknown schedule", "PATCH", "/schedules/nope", `{"enabled":false}`, 404, "not found"),
		do("delete unknown schedule", "DELETE", "/schedules/nope", "", 404, "not found"),
		do("schedule id too long", "GET", "/schedules/"+strings.Repeat("s", 65), "", 400, "schedule id"),
		do("schedules limit zero", "GET", "/schedules?limit=0", "", 400, "limit"),
		do("schedules cursor garbage", "GET", "/schedules?cursor=zzz", "", 400, "cursor"),
		do("patch broken JSON", "PATCH", s, `{"cron":`, 400, "invalid"),
		do("patch array", "PATCH", s, `[]`, 400, "JSON object"),
		do("patch bad cron", "PATCH", s, `{"cron":"sometimes"}`, 422, "cron"),
		do("patch enabled as string", "PATCH", s, `{"enabled":"no"}`, 422, "enabled"),
		do("create huge body", "POST", "/schedules", `{"workflow":"`+strings.Repeat("w", 3<<20)+`"}`, 413, "exceeds"),
		do("create empty", "POST", "/schedules", ``, 400, "empty"),
	}
}

// TestBadInputCount: the suite holds well over 100 malformed requests.
func TestBadInputCount(t *testing.T) {
	t.Parallel()
	cases := allBadCases("run-id", "sched-id")
	require.GreaterOrEqual(t, len(cases), 200, "the bad-input suite shrank")
	for _, tc := range cases {
		require.GreaterOrEqual(t, tc.status, http.StatusBadRequest, tc.name)
		require.Less(t, tc.status, http.StatusInternalServerError, tc.name)
	}
}
