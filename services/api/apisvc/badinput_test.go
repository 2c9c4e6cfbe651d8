package apisvc_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/stretchr/testify/require"
)

// badCase is one malformed request and the 4xx it must get.
type badCase struct {
	name   string
	r      req
	status int
	detail string // a substring of the problem's detail
}

// node builds a node JSON object.
func node(id, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return `{"id":"` + id + `","handler":"noop"` + extra + `}`
}

// def builds a definition JSON with the given nodes.
func def(extra string, nodes ...string) string {
	if extra != "" {
		extra = "," + extra
	}
	return `{"name":"d"` + extra + `,"nodes":[` + strings.Join(nodes, ",") + `]}`
}

// definitionCases are malformed or invalid definitions for POST /workflows.
func definitionCases() []badCase {
	post := func(name, body string, status int, detail string) badCase {
		return badCase{name, req{method: "POST", path: "/workflows", body: body, malformed: true}, status, detail}
	}
	big := def("", node("a", `"config":{"pad":"`+strings.Repeat("x", 1<<20)+`"}`))
	many := make([]string, 10001)
	for i := range many {
		many[i] = `{"id":"n` + itoa(i) + `","handler":"noop"}`
	}
	return []badCase{
		post("broken JSON", `{"name":`, 400, "invalid"),
		post("unterminated string", `{"name":"x`, 400, "invalid"),
		post("empty body", ``, 400, "empty"),
		post("whitespace body", "  \n ", 400, "empty"),
		post("trailing garbage", def("", node("a", ""))+` xyz`, 400, "invalid"),
		post("single quotes", `{'name':'x'}`, 400, "invalid"),
		post("array body", `[]`, 422, "JSON object"),
		post("null body", `null`, 422, "JSON object"),
		post("string body", `"workflow"`, 422, "JSON object"),
		post("number body", `42`, 422, "JSON object"),
		post("no nodes", `{"name":"x"}`, 422, "no nodes"),
		post("empty nodes", `{"name":"x","nodes":[]}`, 422, "no nodes"),
		post("cycle of two", def("", node("a", `"depends_on":["b"]`), node("b", `"depends_on":["a"]`)), 422, "cycle: a -> b -> a"),
		post("cycle of three", def("", node("x", `"depends_on":["z"]`), node("y", `"depends_on":["x"]`), node("z", `"depends_on":["y"]`)), 422, "cycle: x -> y -> z -> x"),
		post("self dependency", def("", node("a", `"depends_on":["a"]`)), 422, "depends on itself"),
		post("duplicate ids", def("", node("a", ""), node("a", "")), 422, "a"),
		post("unknown dependency", def("", node("a", `"depends_on":["ghost"]`)), 422, `unknown node "ghost"`),
		post("duplicate dependency", def("", node("a", ""), node("b", `"depends_on":["a","a"]`)), 422, "duplicate dependency"),
		post("bad node timeout", def("", node("a", `"timeout":"soon"`)), 422, "timeout"),
		post("bad workflow timeout", def(`"timeout":"forever"`, node("a", "")), 422, "timeout"),
		post("negative heartbeat", def("", node("a", `"heartbeat_timeout":"-1s"`)), 422, "negative"),
		post("bad trigger rule", def("", node("a", `"trigger_rule":"sometimes"`)), 422, "unknown trigger rule"),
		post("unparsable when", def("", node("a", `"when":"a ==="`)), 422, "when"),
		post("template to non-ancestor", def("", node("a", ""), node("b", `"config":{"x":"<< a.out >>"}`)), 422, "not an ancestor"),
		post("template to unknown node", def("", node("a", `"config":{"x":"<< nope.out >>"}`)), 422, `unknown node "nope"`),
		post("template to itself", def("", node("a", `"config":{"x":"<< a.out >>"}`)), 422, "itself"),
		post("unclosed template", def("", node("a", `"config":{"x":"<< input.x"}`)), 422, `unterminated "<<"`),
		post("item outside foreach", def("", node("a", `"config":{"x":"<< item >>"}`)), 422, "foreach"),
		post("foreach and parallel", def("", node("a", ""), node("b", `"depends_on":["a"],"foreach":"<< a.x >>","parallel":2`)), 422, "foreach and parallel"),
		post("foreach not a template", def("", node("a", `"foreach":"abc"`)), 422, "foreach must be a template"),
		post("parallel wrong type", def("", node("a", `"parallel":"x"`)), 422, "parallel"),
		post("bad name", `{"name":"Bad Name!","nodes":[`+node("a", "")+`]}`, 422, "name"),
		post("missing name", `{"nodes":[`+node("a", "")+`]}`, 422, "name is required"),
		post("bad node id", def("", `{"id":"a b","handler":"noop"}`), 422, "a b"),
		post("reserved node id", def("", `{"id":"input","handler":"noop"}`), 422, "input"),
		post("missing handler", def("", `{"id":"a"}`), 422, "handler is required"),
		post("unknown top field", `{"name":"x","nodez":[]}`, 422, `unknown field "nodez"`),
		post("unknown node field", def("", node("a", `"retries_please":3`)), 422, "unknown field"),
		post("nodes wrong type", `{"name":"x","nodes":"abc"}`, 422, "array"),
		post("depends_on wrong type", def("", node("a", ""), node("b", `"depends_on":"a"`)), 422, "depends_on"),
		post("id wrong type", def("", `{"id":7,"handler":"noop"}`), 422, "id"),
		post("retry attempts wrong type", def("", node("a", `"retry":{"max_attempts":"three"}`)), 422, "max_attempts"),
		post("retry attempts too many", def("", node("a", `"retry":{"max_attempts":1000}`)), 422, "max_attempts"),
		post("bad backoff", def("", node("a", `"retry":{"backoff":"linear"}`)), 422, "unknown backoff"),
		post("bad jitter", def("", node("a", `"retry":{"jitter":2}`)), 422, "jitter"),
		post("negative concurrency", def(`"concurrency":-1`, node("a", "")), 422, "negative"),
		post("unknown input type", def(`"inputs":{"d":{"type":"date"}}`, node("a", "")), 422, "unknown input type"),
		post("input default of wrong type", def(`"inputs":{"n":{"type":"integer","default":"x"}}`, node("a", "")), 422, "not of type integer"),
		post("config wrong type", `{"id":"seed","tasks":[{"id":"a","command":"echo","config":"x"}]}`, 422, "config"),
		post("too many nodes", def("", many...), 422, "limit is 10000"),
		post("definition over 1 MiB", big, 413, "1 MiB"),
		{"body over the request limit", req{method: "POST", path: "/workflows", body: strings.Repeat(" ", 3<<20), malformed: true}, 413, "exceeds the limit"},
		{"xml content type", req{method: "POST", path: "/workflows", body: `<wf/>`, header: map[string]string{"Content-Type": "application/xml"}, malformed: true}, 415, "application/json"},
		{"validate huge body", req{method: "POST", path: "/workflows/validate", body: strings.Repeat("[", 3<<20), malformed: true}, 413, "exceeds"},
		{"validate xml", req{method: "POST", path: "/workflows/validate", body: `<wf/>`, header: map[string]string{"Content-Type": "text/xml"}, malformed: true}, 415, "Content-Type"},
	}
}

// runRequestCases are malformed run requests against workflow "bad".
func runRequestCases() []badCase {
	post := func(name, body string, status int, detail string) badCase {
		return badCase{name, req{method: "POST", path: "/workflows/bad/runs", body: body, malformed: true}, status, detail}
	}
	in := func(input string) string { return `{"input":` + input + `}` }
	return []badCase{
		post("broken JSON", `{"input":`, 400, "invalid JSON body"),
		post("array body", `[]`, 400, "an object"),
		post("string body", `"go"`, 400, "an object"),
		post("unknown field", `{"inputs":{"n":1}}`, 400, `unknown field "inputs"`),
		post("extra field", `{"input":{"n":1},"priority":3}`, 400, `unknown field "priority"`),
		post("trailing data", in(`{"n":1}`)+`{}`, 400, "after the JSON value"),
		post("input is a string", in(`"n=1"`), 422, "must be a JSON object"),
		post("input is an array", in(`[1]`), 422, "must be a JSON object"),
		post("input is a number", in(`1`), 422, "must be a JSON object"),
		post("missing required", in(`{}`), 422, `required input "n" is missing`),
		post("empty body misses required", ``, 422, `required input "n" is missing`),
		post("integer as string", in(`{"n":"one"}`), 422, `input "n" must be an integer, got a string`),
		post("integer as float", in(`{"n":1.5}`), 422, `must be an integer, got a number`),
		post("required null", in(`{"n":null}`), 422, "must not be null"),
		post("string as number", in(`{"n":1,"s":5}`), 422, `input "s" must be a string`),
		post("boolean as string", in(`{"n":1,"b":"true"}`), 422, `input "b" must be a boolean`),
		post("object as array", in(`{"n":1,"o":[]}`), 422, `input "o" must be an object`),
		post("array as object", in(`{"n":1,"a":{}}`), 422, `input "a" must be an array`),
		post("number as string", in(`{"n":1,"num":"1"}`), 422, `input "num" must be a number`),
		post("undeclared input", in(`{"n":1,"zz":1}`), 422, `unknown input "zz"`),
		post("many problems", in(`{"s":1,"b":2,"zz":3}`), 422, "4 problems"),
		{"idempotency key too long", req{method: "POST", path: "/workflows/bad/runs", body: in(`{"n":1}`), header: map[string]string{"Idempotency-Key": strings.Repeat("k", 300)}, malformed: true}, 400, "Idempotency-Key"},
		{"idempotency key with space", req{method: "POST", path: "/workflows/bad/runs", body: in(`{"n":1}`), header: map[string]string{"Idempotency-Key": "a b"}, malformed: true}, 400, "Idempotency-Key"},
		{"huge run body", req{method: "POST", path: "/workflows/bad/runs", body: in(`"` + strings.Repeat("x", 3<<20) + `"`), malformed: true}, 413, "exceeds"},
		{"xml run body", req{method: "POST", path: "/workflows/bad/runs", body: `<x/>`, header: map[string]string{"Content-Type": "application/xml"}, malformed: true}, 415, "Content-Type"},
		{"alias with broken JSON", req{method: "POST", path: "/workflows/bad/run", body: `{`, malformed: true}, 400, "invalid JSON"},
		{"unknown workflow", req{method: "POST", path: "/workflows/nope/runs"}, 404, `workflow "nope" not found`},
		{"invalid workflow name", req{method: "POST", path: "/workflows/Bad%21/runs", malformed: true}, 400, "workflow name"},
		{"workflow name too long", req{method: "POST", path: "/workflows/" + strings.Repeat("a", 65) + "/runs", malformed: true}, 400, "workflow name"},
	}
}

// queryCases are bad ids and query parameters of the read endpoints.
func queryCases(run string) []badCase {
	get := func(name, path string, status int, detail string) badCase {
		return badCase{name, req{method: "GET", path: path, malformed: true}, status, detail}
	}
	otherList := base64.RawURLEncoding.EncodeToString([]byte(`{"l":"tasks","o":3}`))
	emptyCursor := base64.RawURLEncoding.EncodeToString([]byte(`{"l":"runs"}`))
	r := "/runs/" + run
	return []badCase{
		get("workflow uppercase", "/workflows/Bad", 400, "workflow name"),
		get("unknown workflow", "/workflows/nope", 404, `workflow "nope" not found`),
		get("versions of unknown workflow", "/workflows/nope/versions", 404, "not found"),
		get("version zero", "/workflows/bad/versions?version=0", 400, "version"),
		get("version not a number", "/workflows/bad/versions?version=abc", 400, "version"),
		get("version out of range", "/workflows/bad/versions?version=99999999999", 400, "version"),
		get("version missing", "/workflows/bad/versions?version=99", 404, "no version 99"),
		get("workflows limit zero", "/workflows?limit=0", 400, "limit"),
		get("workflows limit negative", "/workflows?limit=-1", 400, "limit"),
		get("workflows limit too big", "/workflows?limit=501", 400, "limit"),
		get("workflows limit not a number", "/workflows?limit=ten", 400, "limit"),
		get("workflows cursor garbage", "/workflows?cursor=!!!", 400, "cursor"),
		get("workflows cursor empty", "/workflows?cursor=", 400, "cursor"),
		get("workflows cursor of another list", "/workflows?cursor="+emptyCursor, 400, "cursor"),
		get("runs limit zero", "/runs?limit=0", 400, "limit"),
		get("runs limit too big", "/runs?limit=1000", 400, "limit"),
		get("runs limit fractional", "/runs?limit=1.5", 400, "limit"),
		get("runs bad status", "/runs?status=done", 400, "not a run status"),
		get("runs one bad status", "/runs?status=failed,nope", 400, `"nope" is not a run status`),
		get("runs bad workflow", "/runs?workflow=BAD", 400, "workflow"),
		get("runs cursor garbage", "/runs?cursor=%25%25", 400, "cursor"),
		get("runs cursor of another list", "/runs?cursor="+otherList, 400, "cursor"),
		get("runs cursor without position", "/runs?cursor="+emptyCursor, 400, "cursor"),
		get("runs cursor not JSON", "/runs?cursor="+base64.RawURLEncoding.EncodeToString([]byte("hello")), 400, "cursor"),
		get("unknown run", "/runs/no-such-run", 404, `run "no-such-run" not found`),
		get("run id with braces", "/runs/"+url.PathEscape("a{b}"), 400, "run id"),
		get("run id too long", "/runs/"+strings.Repeat("r", 200), 400, "run id"),
		get("tasks of unknown run", "/runs/no-such-run/tasks", 404, "not found"),
		get("tasks limit zero", r+"/tasks?limit=0", 400, "limit"),
		get("tasks limit too big", r+"/tasks?limit=5000", 400, "limit"),
		get("tasks cursor garbage", r+"/tasks?cursor=zzz", 400, "cursor"),
		get("task unknown node", r+"/tasks/ghost", 404, `no node "ghost"`),
		get("task bad node id", r+"/tasks/a.b", 400, "node id"),
		get("task negative instance", r+"/tasks/a?instance=-1", 400, "instance"),
		get("task instance not a number", r+"/tasks/a?instance=x", 400, "instance"),
		get("task missing instance", r+"/tasks/a?instance=3", 404, "no instance 3"),
		get("task of unknown run", "/runs/no-such-run/tasks/a", 404, "not found"),
		get("logs attempt zero", r+"/tasks/a/logs?attempt=0", 400, "attempt"),
		get("logs attempt not a number", r+"/tasks/a/logs?attempt=x", 400, "attempt"),
		get("logs follow not a boolean", r+"/tasks/a/logs?follow=maybe", 400, "follow"),
		get("logs unknown node", r+"/tasks/ghost/logs", 404, `no node "ghost"`),
		get("logs unknown run", "/runs/no-such-run/tasks/a/logs", 404, "not found"),
		get("logs missing attempt", r+"/tasks/a/logs?attempt=5", 404, "no attempt 5"),
		get("events of unknown run", "/runs/no-such-run/events", 404, "not found"),
		get("events bad run id", "/runs/"+url.PathEscape("a b")+"/events", 400, "run id"),
		{"events bad Last-Event-ID", req{method: "GET", path: r + "/events", header: map[string]string{"Last-Event-ID": "abc"}, malformed: true}, 400, "Last-Event-ID"},
		get("workers all not a boolean", "/workers?all=maybe", 400, "all"),
	}
}

// controlCases are bad control requests on a pending run.
func controlCases(run string) []badCase {
	post := func(name, path, body string, status int, detail string) badCase {
		return badCase{name, req{method: "POST", path: path, body: body, malformed: true}, status, detail}
	}
	r := "/runs/" + run
	return []badCase{
		post("cancel unknown run", "/runs/no-such-run/cancel", "", 404, "not found"),
		post("cancel bad run id", "/runs/"+url.PathEscape("x}")+"/cancel", "", 400, "run id"),
		post("cancel reason wrong type", r+"/cancel", `{"reason":1}`, 400, "reason must be a string"),
		post("cancel unknown field", r+"/cancel", `{"why":"x"}`, 400, `unknown field "why"`),
		post("cancel broken JSON", r+"/cancel", `{`, 400, "invalid JSON"),
		post("pause array body", r+"/pause", `[]`, 400, "an object"),
		post("resume trailing data", r+"/resume", `{} {}`, 400, "after the JSON value"),
		post("rerun without from", r+"/rerun", "", 400, "?from="),
		post("rerun from unknown node", r+"/rerun?from=ghost", "", 400, "no such node"),
		post("rerun from bad node id", r+"/rerun?from="+url.QueryEscape("a b"), "", 400, "not a node id"),
		post("retry unfinished run", r+"/retry", "", 409, "applies to finished runs"),
		post("approve a non-approval node", r+"/tasks/a/approve", "", 409, "node a is not an approval node"),
		post("reject a non-approval node", r+"/tasks/a/reject", "", 409, "node a is not an approval node"),
		post("approve unknown node", r+"/tasks/ghost/approve", "", 404, `no node "ghost"`),
		post("approve bad node id", r+"/tasks/"+url.PathEscape("a.b")+"/approve", "", 400, "node id"),
		post("approve unknown run", "/runs/no-such-run/tasks/a/approve", "", 404, "not found"),
		{"control xml body", req{method: "POST", path: r + "/pause", body: `<x/>`, header: map[string]string{"Content-Type": "application/xml"}, malformed: true}, 415, "Content-Type"},
		{"control huge body", req{method: "POST", path: r + "/cancel", body: `{"reason":"` + strings.Repeat("x", 3<<20) + `"}`, malformed: true}, 413, "exceeds"},
		{"unknown route", req{method: "GET", path: "/nope", malformed: true}, 404, "no endpoint"},
		{"unknown nested route", req{method: "GET", path: r + "/tasks/a/logs/more", malformed: true}, 404, "no endpoint"},
		{"wrong method on workflows", req{method: "PUT", path: "/workflows", malformed: true}, 405, "PUT is not allowed"},
		{"wrong method on a run", req{method: "PUT", path: r, malformed: true}, 405, "not allowed"},
		{"delete a run that has not ended", req{method: "DELETE", path: r}, 409, "only an ended run"},
		{"delete an unknown run", req{method: "DELETE", path: "/runs/no-such-run"}, 404, "not found"},
		{"delete a malformed run id", req{method: "DELETE", path: "/runs/a%20b", malformed: true}, 400, "run id"},
		{"wrong method on cancel", req{method: "GET", path: r + "/cancel", malformed: true}, 405, "not allowed"},
	}
}

// allBadCases is every malformed request of the suite, against workflow
// "bad" (see setupBadInput), its run and schedule sched.
func allBadCases(run, sched string) []badCase {
	var cases []badCase
	for _, set := range [][]badCase{definitionCases(), runRequestCases(), queryCases(run), controlCases(run),
		headerCases(run), pathCases(run), methodCases(run), bodyCases(run), scheduleCases(sched)} {
		cases = append(cases, set...)
	}
	return cases
}

// setupBadInput registers what the cases need: workflow "bad" with typed
// inputs, one pending run of it and a schedule of it.
func setupBadInput(e *env) (run, sched string) {
	e.t.Helper()
	e.register(`{"name":"bad","inputs":{"n":{"type":"integer","required":true},"s":{"type":"string"},"b":{"type":"boolean"},
		"o":{"type":"object"},"a":{"type":"array"},"num":{"type":"number"}},"nodes":[{"id":"a","handler":"noop"}]}`)
	run = e.startRun("bad", map[string]any{"input": map[string]any{"n": 1}}, nil)
	sched = e.schedule(map[string]any{"workflow": "bad", "cron": "@daily", "input": map[string]any{"n": 1}}).ID
	return run, sched
}

// checkBad sends tc and requires its 4xx: problem+json (checked against the
// OpenAPI document) with a clear detail and the request path; never a 5xx.
func checkBad(t *testing.T, e *env, tc badCase) {
	t.Helper()
	resp := e.client.do(t, tc.r, !tc.r.malformed)
	require.Less(t, resp.Status, 500, "never a 5xx for bad input: %s", truncate(resp.Body))
	require.Equal(t, tc.status, resp.Status, "%s", truncate(resp.Body))
	p := resp.problem(t)
	require.Contains(t, p.Detail, tc.detail)
	require.Equal(t, unescape(strings.SplitN(tc.r.path, "?", 2)[0]), unescape(p.Instance))
	if tc.status == http.StatusUnprocessableEntity {
		require.NotEmpty(t, p.Errors, "a validation problem lists its errors")
		require.LessOrEqual(t, len(p.Errors), dag.MaxProblems+1, "problems are capped")
		for _, fe := range p.Errors {
			require.True(t, strings.HasPrefix(fe.Path, "$"), "error path %q", fe.Path)
		}
	}
}

// TestBadInput sends every malformed request of the suite (over 200, across
// every endpoint): each gets a 4xx problem+json with a clear detail, never
// a 5xx.
func TestBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	run, sched := setupBadInput(e)
	cases := allBadCases(run, sched)
	require.GreaterOrEqual(t, len(cases), 100)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkBad(t, e, tc) })
	}
	many := e.must(req{method: "POST", path: "/workflows/bad/runs", body: `{"input":{"s":1,"b":2,"zz":3}}`, malformed: true}, 422).problem(t)
	require.Len(t, many.Errors, 4, "every input problem is listed: %+v", many.Errors)
}

func unescape(p string) string {
	u, err := url.PathUnescape(p)
	if err != nil {
		return p
	}
	return u
}
