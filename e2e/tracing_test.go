package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/otlpsink"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
)

// A caller's trace context, as a client that traces would send it.
const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// TestTracingOneRunIsOneTrace runs seed 000's diamond on a stack of
// separate processes exporting to an OTLP receiver in the test: the run is
// one trace continuing the caller's traceparent, whose spans cover the
// api request, the orchestrator's handling of the start, every dispatch's
// attempt on a worker (claim, execute) and every result's handling, each
// parented by the span that caused it. Log lines carry the trace's ids. A
// second run's http node sends the trace on to the service it calls, and
// its shell node gets it as TRACEPARENT.
func TestTracingOneRunIsOneTrace(t *testing.T) {
	t.Parallel()
	sink := otlpsink.Start(t)
	called := startTraceEcho(t)
	s, stop := StartStack(t, stackOpts{workers: 1, env: []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.URL, "OTEL_BSP_SCHEDULE_DELAY=100",
		"BRAID_HTTP_ALLOW=" + called.host,
	}})
	t.Cleanup(stop)
	c := s.client(t)
	name, _ := c.register(readExample(t, "seed-000-example-workflow.json"))
	id := startTraced(t, c, name, "00-"+callerTrace+"-"+callerSpan+"-01")
	require.Equal(t, "succeeded", c.waitDone(id, time.Minute).Status)

	nodes := []string{"A", "B", "C", "D"}
	var spans []otlpsink.Span
	// Each service exports on its own timer, so a span can arrive before
	// its parent from another process: wait for the results' handling and
	// for every parent (the assertions below then say which is missing).
	sink.Wait(30*time.Second, func(all []otlpsink.Span) bool {
		spans = ofRun(all, id)
		return handledResults(spans, nodes) == len(nodes) && orphans(sink.Trace(callerTrace), callerSpan) == 0
	})
	require.Equal(t, len(nodes), handledResults(spans, nodes), "the results of %v were not all handled in the trace; spans of the run:\n%s", nodes, describe(spans))
	spans = sink.Trace(callerTrace)
	byID := map[string]otlpsink.Span{}
	for _, sp := range spans {
		byID[sp.SpanID] = sp
	}
	for _, sp := range ofRun(sink.Spans(), id) {
		require.Equal(t, callerTrace, sp.TraceID, "span %q of the run is in another trace", sp.Name)
	}
	for _, sp := range spans {
		if sp.ParentID != callerSpan {
			require.Contains(t, byID, sp.ParentID, "span %q (%s) has a parent that is not in the trace:\n%s", sp.Name, sp.Service, describe(spans))
		}
	}

	api := only(t, spans, func(sp otlpsink.Span) bool { return sp.Name == "POST /workflows/:name/runs" })
	require.Equal(t, "braid-api", api.Service)
	require.Equal(t, callerSpan, api.ParentID, "the api continues the caller's trace")
	require.Equal(t, id, api.Attrs["braid.run_id"])
	start := only(t, spans, func(sp otlpsink.Span) bool { return sp.Name == "handle start" })
	require.Equal(t, "braid-orchestrator", start.Service)
	require.Equal(t, api.SpanID, start.ParentID, "the start is handled under the api's request")
	require.Equal(t, "example_workflow", start.Attrs["braid.workflow"])
	requireChildren(t, spans, start, "apply", "write", "publish")

	for _, node := range nodes {
		task := only(t, spans, func(sp otlpsink.Span) bool { return sp.Name == "task shell" && sp.Attrs["braid.node_id"] == node })
		require.Equal(t, "braid-worker", task.Service, node)
		require.Equal(t, id, task.Attrs["braid.run_id"], node)
		require.Equal(t, "succeeded", task.Attrs["braid.status"], node)
		dispatcher := byID[task.ParentID]
		require.Equal(t, "braid-orchestrator", dispatcher.Service, "node %s was dispatched by %q", node, dispatcher.Name)
		require.True(t, strings.HasPrefix(dispatcher.Name, "handle "), "node %s was dispatched by %q", node, dispatcher.Name)
		requireChildren(t, spans, task, "claim", "execute shell")
		// Its result is handled under it (or linked, when another result of
		// the run came in the same batch first).
		require.True(t, slicesHas(spans, func(sp otlpsink.Span) bool {
			return sp.Service == "braid-orchestrator" && strings.HasPrefix(sp.Name, "handle result") &&
				(sp.ParentID == task.SpanID || slices.Contains(sp.Links, task.SpanID))
		}), "the result of node %s is not handled under its task span:\n%s", node, describe(spans))
	}
	// D runs after B and C: its dispatch follows from one of their results.
	d := only(t, spans, func(sp otlpsink.Span) bool { return sp.Name == "task shell" && sp.Attrs["braid.node_id"] == "D" })
	cause := byID[byID[d.ParentID].ParentID]
	require.Equal(t, "task shell", cause.Name, "D's dispatch follows from a result")
	require.Contains(t, []string{"B", "C"}, cause.Attrs["braid.node_id"])

	// Logs of every service carry the trace id.
	requireLogHasTrace(t, s.procNamed(t, "api"), "run requested")
	requireLogHasTrace(t, s.workerProcs[0], "attempt finished")

	// An http node sends the trace to the service it calls; a shell node
	// gets it as TRACEPARENT.
	def := fmt.Sprintf(`{"name":"traced_calls","nodes":[
		{"id":"call","handler":"http","config":{"url":%q}},
		{"id":"env","handler":"shell","config":{"command":"echo $TRACEPARENT"},"depends_on":["call"]}]}`, called.url)
	name2, _ := c.register([]byte(def))
	const other = "0af7651916cd43dd8448eb211c80319c"
	id2 := startTraced(t, c, name2, "00-"+other+"-b7ad6b7169203331-01")
	require.Equal(t, "succeeded", c.waitDone(id2, time.Minute).Status)
	got := called.received()
	require.Len(t, got, 1, "the http node called once")
	sc := parseTraceparent(t, got[0])
	require.Equal(t, other, sc.TraceID().String(), "the called service got the run's trace")
	require.True(t, sink.Wait(30*time.Second, func(all []otlpsink.Span) bool {
		return slicesHas(all, func(sp otlpsink.Span) bool { return sp.SpanID == sc.SpanID().String() })
	}), "no span %s (the http call) arrived", sc.SpanID())
	calls := sink.Trace(other)
	callSpan := only(t, calls, func(sp otlpsink.Span) bool { return sp.SpanID == sc.SpanID().String() })
	require.Equal(t, "HTTP GET", callSpan.Name)
	require.Equal(t, "200", callSpan.Attrs["http.response.status_code"])
	parent := only(t, calls, func(sp otlpsink.Span) bool { return sp.SpanID == callSpan.ParentID })
	require.Equal(t, "execute http", parent.Name, "the call is a child of the handler's execution")
	var task struct {
		Output struct {
			Stdout string `json:"stdout"`
		} `json:"output"`
	}
	c.call(http.MethodGet, "/runs/"+id2+"/tasks/env", nil, http.StatusOK, &task)
	envSC := parseTraceparent(t, strings.TrimSpace(task.Output.Stdout))
	require.Equal(t, other, envSC.TraceID().String(), "the shell task's TRACEPARENT is in the run's trace")
}

// startTraced starts a run of workflow with a traceparent header.
func startTraced(t *testing.T, c *apiClient, workflow, traceparent string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+"/workflows/"+url.PathEscape(workflow)+"/runs", bytes.NewReader([]byte(`{"input":{}}`)))
	require.NoError(t, err)
	req.Header.Set("X-API-Key", c.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", traceparent)
	resp, err := c.hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		RunID string `json:"run_id"`
	}
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotEmpty(t, out.RunID)
	return out.RunID
}

// ofRun are the spans naming run.
func ofRun(spans []otlpsink.Span, run string) []otlpsink.Span {
	var out []otlpsink.Span
	for _, sp := range spans {
		if sp.Attrs["braid.run_id"] == run {
			out = append(out, sp)
		}
	}
	return out
}

// handledResults counts the nodes whose final result an orchestrator
// handled under (or linked to) their task span.
func handledResults(spans []otlpsink.Span, nodes []string) int {
	n := 0
	for _, node := range nodes {
		for _, task := range spans {
			if task.Name != "task shell" || task.Attrs["braid.node_id"] != node {
				continue
			}
			if slicesHas(spans, func(sp otlpsink.Span) bool {
				return strings.HasPrefix(sp.Name, "handle result") && (sp.ParentID == task.SpanID || slices.Contains(sp.Links, task.SpanID))
			}) {
				n++
			}
		}
	}
	return n
}

// orphans counts the spans whose parent is neither root nor among spans.
func orphans(spans []otlpsink.Span, root string) int {
	ids := map[string]bool{root: true}
	for _, sp := range spans {
		ids[sp.SpanID] = true
	}
	n := 0
	for _, sp := range spans {
		if !ids[sp.ParentID] {
			n++
		}
	}
	return n
}

// only returns the one span matching ok.
func only(t *testing.T, spans []otlpsink.Span, ok func(otlpsink.Span) bool) otlpsink.Span {
	t.Helper()
	var found []otlpsink.Span
	for _, sp := range spans {
		if ok(sp) {
			found = append(found, sp)
		}
	}
	require.Len(t, found, 1, "spans:\n%s", describe(spans))
	return found[0]
}

// requireChildren requires a child span of parent for each name.
func requireChildren(t *testing.T, spans []otlpsink.Span, parent otlpsink.Span, names ...string) {
	t.Helper()
	for _, name := range names {
		require.True(t, slicesHas(spans, func(sp otlpsink.Span) bool { return sp.ParentID == parent.SpanID && sp.Name == name }),
			"%q has no child %q:\n%s", parent.Name, name, describe(spans))
	}
}

func slicesHas(spans []otlpsink.Span, ok func(otlpsink.Span) bool) bool {
	for _, sp := range spans {
		if ok(sp) {
			return true
		}
	}
	return false
}

// describe lists spans for a failure message.
func describe(spans []otlpsink.Span) string {
	var b strings.Builder
	for _, sp := range spans {
		fmt.Fprintf(&b, "  %s %s/%s parent=%s links=%v %s node=%s\n", sp.Service, sp.TraceID[:8], sp.SpanID, sp.ParentID, sp.Links, sp.Name, sp.Attrs["braid.node_id"])
	}
	return b.String()
}

// parseTraceparent parses a W3C traceparent.
func parseTraceparent(t *testing.T, tp string) trace.SpanContext {
	t.Helper()
	parts := strings.Split(tp, "-")
	require.Len(t, parts, 4, "traceparent %q", tp)
	tid, err := trace.TraceIDFromHex(parts[1])
	require.NoError(t, err, tp)
	sid, err := trace.SpanIDFromHex(parts[2])
	require.NoError(t, err, tp)
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid})
}

// requireLogHasTrace requires a line of p's log with msg that carries the
// caller's trace id.
func requireLogHasTrace(t *testing.T, p *proc, msg string) {
	t.Helper()
	for _, line := range strings.Split(p.log(), "\n") {
		if strings.Contains(line, `"msg":"`+msg+`"`) && strings.Contains(line, `"trace_id":"`+callerTrace+`"`) {
			return
		}
	}
	t.Fatalf("%s logged no %q line with trace_id %s:\n%s", p.name, msg, callerTrace, p.tail())
}

// traceEcho is an HTTP server that records the traceparent of each request.
type traceEcho struct {
	url, host string
	mu        sync.Mutex
	got       []string
}

func startTraceEcho(t *testing.T) *traceEcho {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	e := &traceEcho{url: "http://" + ln.Addr().String() + "/hook", host: ln.Addr().String()}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.got = append(e.got, r.Header.Get("traceparent"))
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return e
}

func (e *traceEcho) received() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.got...)
}
