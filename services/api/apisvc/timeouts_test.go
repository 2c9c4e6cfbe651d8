package apisvc_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/stretchr/testify/require"
)

// shortTimeouts serve through Server.Serve with timeouts short enough to
// pass several times within a test.
var shortTimeouts = envOpts{serve: true, keepAlive: 100 * time.Millisecond,
	timeouts: timeoutOpts{readHeader: 300 * time.Millisecond, read: 500 * time.Millisecond, write: time.Second, maxHeaderBytes: 4096}}

// dial opens a raw connection to the api of e.
func (e *env) dial() net.Conn {
	e.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// TestSlowlorisHeadersCutOff sends a request's headers a byte at a time:
// the server closes the connection at ReadHeaderTimeout, long before the
// headers would be complete (80 header lines at 20ms a byte: over a minute).
// ReadTimeout is long here, so that it is ReadHeaderTimeout that cuts.
func TestSlowlorisHeadersCutOff(t *testing.T) {
	t.Parallel()
	o := shortTimeouts
	o.timeouts.read, o.timeouts.write = time.Minute, 2*time.Minute
	e := setup(t, o)
	got := testinfra.Slowloris(t, strings.TrimPrefix(e.url, "http://"), "/healthz", 10*time.Second)
	require.NotContains(t, got, "200 OK", "a request whose headers never came is not served") // net/http may say 400
}

// TestSlowBodyGets408 sends the headers at once and the body a byte at a
// time: at ReadTimeout the api answers 408 problem+json.
func TestSlowBodyGets408(t *testing.T) {
	t.Parallel()
	e := setup(t, shortTimeouts)
	conn := e.dial()
	body := `{"name":"slow","nodes":[{"id":"a","handler":"noop","config":{"pad":"` + strings.Repeat("x", 2000) + `"}}]}`
	head := "POST /workflows HTTP/1.1\r\nHost: braid\r\nX-API-Key: " + writeSecret +
		"\r\nContent-Type: application/json\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n"
	_, err := conn.Write([]byte(head))
	require.NoError(t, err)
	testinfra.Trickle(conn, body)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the api answers before the body would be complete (over 40 s)")
	defer resp.Body.Close()
	out := response{Status: resp.StatusCode, Header: resp.Header, Body: readAll(t, resp.Body)}
	require.Equal(t, http.StatusRequestTimeout, out.Status, "%s", out.Body)
	require.Contains(t, out.problem(t).Detail, "did not arrive before the server's read timeout")
}

// TestSlowReaderCutOff pipelines requests for far more than the socket
// buffers hold and does not read the answers: once the server's write has
// been blocked for WriteTimeout it closes the connection, so the client
// gets only part of what it asked for.
func TestSlowReaderCutOff(t *testing.T) {
	t.Parallel()
	e := setup(t, shortTimeouts)
	one := len(e.must(req{method: "GET", path: "/openapi.json", key: "-"}, http.StatusOK).Body)
	const n = 400 // about 30 MiB of answers
	conn := e.dial()
	_, err := conn.Write([]byte(strings.Repeat("GET /openapi.json HTTP/1.1\r\nHost: braid\r\n\r\n", n)))
	require.NoError(t, err)
	time.Sleep(3 * time.Second) // the client under test does not read: that is its behaviour
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	got, err := io.Copy(io.Discard, conn)
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the connection is closed, not still sending")
	require.Less(t, got, int64(n*one), "the server gave up on the slow reader")
}

// TestHeadersTooLarge: headers past MaxHeaderBytes get net/http's 431 (in
// text: it answers before any handler runs).
func TestHeadersTooLarge(t *testing.T) {
	t.Parallel()
	e := setup(t, shortTimeouts)
	e.must(req{method: "GET", path: "/workflows", header: map[string]string{"X-Big": strings.Repeat("b", 2000)}}, http.StatusOK)
	hr, err := http.NewRequest(http.MethodGet, e.url+"/workflows", nil)
	require.NoError(t, err)
	hr.Header.Set("X-API-Key", writeSecret)
	hr.Header.Set("X-Big", strings.Repeat("b", 16<<10))
	resp, err := http.DefaultClient.Do(hr)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
}

// TestStreamOutlivesServerTimeouts keeps an SSE stream open for several
// times ReadTimeout and WriteTimeout: its keep-alives keep coming.
func TestStreamOutlivesServerTimeouts(t *testing.T) {
	t.Parallel()
	e := setup(t, shortTimeouts)
	name, _ := e.register(`{"name":"long","nodes":[{"id":"a","handler":"noop"}]}`)
	run := e.startRun(name, nil, nil)
	for _, path := range []string{"/runs/" + run + "/events", "/runs/" + run + "/tasks/a/logs?follow=true"} {
		stream := e.client.stream(t, req{method: "GET", path: path})
		events := newSSEReader(stream.Body)
		start := time.Now()
		for time.Since(start) < 3*time.Second { // three times each timeout
			events.nextAny(t, 5*time.Second)
		}
		require.Equal(t, "keep-alive", events.nextAny(t, 5*time.Second).comment, "%s is still open", path)
	}
}

// TestWaitOutlivesServerTimeouts waits (?wait=) past ReadTimeout and
// WriteTimeout and still gets its answer.
func TestWaitOutlivesServerTimeouts(t *testing.T) {
	t.Parallel()
	e := setup(t, shortTimeouts)
	name, _ := e.register(`{"name":"later","nodes":[{"id":"a","handler":"noop"}]}`)
	run := e.startRun(name, nil, nil)
	var v runView
	e.must(req{method: "GET", path: "/runs/" + run + "?wait=2500ms"}, http.StatusOK).json(t, &v)
	require.Equal(t, "pending", v.Status, "no engine runs: the wait ends with the run as it is")
	resp := e.must(req{method: "POST", path: "/workflows/" + name + "/runs?wait=2500ms", body: `{"input":{}}`}, http.StatusAccepted)
	require.Contains(t, string(resp.Body), `"run_id"`)
}
