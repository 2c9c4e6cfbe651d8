package browser

import (
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/stretchr/testify/require"
)

// The recorder's judgement, fed synthetic events: no browser needed.

func consoleCall(typ runtime.APIType, args ...*runtime.RemoteObject) *runtime.EventConsoleAPICalled {
	return &runtime.EventConsoleAPICalled{Type: typ, Args: args, StackTrace: &runtime.StackTrace{
		CallFrames: []*runtime.CallFrame{{URL: "http://h/app.js", LineNumber: 1, ColumnNumber: 4}},
	}}
}

func str(s string) *runtime.RemoteObject {
	return &runtime.RemoteObject{Type: runtime.TypeString, Value: []byte(jsString(s))}
}

func sent(id, method, url string) *network.EventRequestWillBeSent {
	return &network.EventRequestWillBeSent{RequestID: network.RequestID(id), Request: &network.Request{Method: method, URL: url}}
}

func failed(id, text string, canceled bool) *network.EventLoadingFailed {
	return &network.EventLoadingFailed{RequestID: network.RequestID(id), ErrorText: text, Canceled: canceled}
}

func response(status int64, url string) *network.EventResponseReceived {
	return &network.EventResponseReceived{Response: &network.Response{Status: status, URL: url}}
}

func TestRecorder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events []any
		expect func(*recorder) // declared after the events: expectations apply when read
		want   []string
	}{
		{name: "console.error with its source location", events: []any{
			consoleCall(runtime.APITypeError, str("boom"), &runtime.RemoteObject{Type: runtime.TypeNumber, Value: []byte("42")}),
		}, want: []string{"console.error at http://h/app.js:2:5: boom 42"}},
		{name: "console.log and warn are no problem", events: []any{
			consoleCall(runtime.APITypeLog, str("hi")), consoleCall(runtime.APITypeWarning, str("careful")),
		}},
		{name: "failed console.assert", events: []any{consoleCall(runtime.APITypeAssert, str("Assertion failed"))},
			want: []string{"console.assert at http://h/app.js:2:5: Assertion failed"}},
		{name: "uncaught exception", events: []any{&runtime.EventExceptionThrown{ExceptionDetails: &runtime.ExceptionDetails{
			Text: "Uncaught", URL: "http://h/app.js", LineNumber: 9, ColumnNumber: 2,
			Exception: &runtime.RemoteObject{Type: runtime.TypeObject, Description: "Error: bad"},
		}}}, want: []string{"uncaught exception at http://h/app.js:10:3: Uncaught Error: bad"}},
		{name: "unhandled rejection of a string, located by its stack", events: []any{&runtime.EventExceptionThrown{ExceptionDetails: &runtime.ExceptionDetails{
			Text: "Uncaught (in promise)", Exception: str("nope"),
			StackTrace: &runtime.StackTrace{CallFrames: []*runtime.CallFrame{{URL: "http://h/a.js", LineNumber: 0, ColumnNumber: 7}}},
		}}}, want: []string{"uncaught exception at http://h/a.js:1:8: Uncaught (in promise) nope"}},
		{name: "failed request named by method and URL", events: []any{
			sent("1", "GET", "http://h/x"), failed("1", "net::ERR_CONNECTION_REFUSED", false),
		}, want: []string{"request failed: GET http://h/x: net::ERR_CONNECTION_REFUSED"}},
		{name: "requests aborted on purpose or by a navigation are no problem", events: []any{
			sent("1", "GET", "http://h/slow"), failed("1", "net::ERR_ABORTED", false),
			sent("2", "GET", "http://h/events"), failed("2", "", true),
		}},
		{name: "error responses", events: []any{response(404, "http://h/missing"), response(200, "http://h/ok"), response(500, "http://h/bad")},
			want: []string{"HTTP 404 from http://h/missing", "HTTP 500 from http://h/bad"}},
		{name: "an expected status only covers that status at matching URLs", events: []any{
			response(401, "http://h/api/whoami"), response(401, "http://h/api/runs"), response(500, "http://h/api/whoami"),
		}, expect: func(r *recorder) { r.expectStatus(401, "/whoami") },
			want: []string{"HTTP 401 from http://h/api/runs", "HTTP 500 from http://h/api/whoami"}},
		{name: "an expected failure only covers failed requests", events: []any{
			sent("1", "GET", "http://h/a"), failed("1", "net::ERR_CONNECTION_REFUSED", false),
			sent("2", "GET", "http://h/b"), failed("2", "net::ERR_EMPTY_RESPONSE", false),
			response(502, "http://h/ERR_CONNECTION_REFUSED"),
		}, expect: func(r *recorder) { r.expectFailed("ERR_CONNECTION_REFUSED") },
			want: []string{"request failed: GET http://h/b: net::ERR_EMPTY_RESPONSE", "HTTP 502 from http://h/ERR_CONNECTION_REFUSED"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var r recorder
			for _, ev := range tc.events {
				r.listen(ev)
			}
			if tc.expect != nil {
				tc.expect(&r)
			}
			require.Equal(t, tc.want, r.problems())
		})
	}
}

func TestRecorderForgetsFinishedRequests(t *testing.T) {
	t.Parallel()
	var r recorder
	r.listen(sent("1", "GET", "http://h/a"))
	r.listen(sent("2", "POST", "http://h/b"))
	r.listen(&network.EventLoadingFinished{RequestID: "1"})
	r.listen(failed("2", "net::ERR_ABORTED", true))
	require.Empty(t, r.requests, "requests in flight")
	seen, aborted := r.counts()
	require.Equal(t, 0, seen)
	require.Equal(t, 1, aborted)
}
