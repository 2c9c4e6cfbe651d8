package client

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func sse(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, body)
	}
}

func TestFollowLogsStopsAtEnd(t *testing.T) {
	t.Parallel()
	var query string
	c := fakeAPI(t, map[string]http.HandlerFunc{
		"GET /runs/r/tasks/n/logs": func(w http.ResponseWriter, r *http.Request) {
			query = r.URL.RawQuery
			sse("id: 1\nevent: line\ndata: {\"stream\":\"stdout\",\"line\":\"one\"}\n\n"+
				": keep-alive\n\n"+
				"id: 2\nevent: line\ndata: {\"stream\":\"stderr\",\"line\":\"two\"}\n\n"+
				"event: end\ndata: {\"attempt\":2}\n\n"+
				"event: line\ndata: {\"line\":\"never\"}\n\n")(w, r)
		},
	})
	var got []LogLine
	err := c.FollowLogs(context.Background(), "r", "n", 3, 2, func(l LogLine) error { got = append(got, l); return nil })
	require.NoError(t, err)
	require.Equal(t, []LogLine{{Stream: "stdout", Line: "one"}, {Stream: "stderr", Line: "two"}}, got)
	require.Equal(t, "attempt=2&follow=true&instance=3", query)
}

func TestStreamRejectsNonEventStream(t *testing.T) {
	t.Parallel()
	c := fakeAPI(t, map[string]http.HandlerFunc{"GET /runs/r/events": jsonReply(http.StatusOK, `{}`)})
	err := c.RunEvents(context.Background(), "r", func(Event) error { return nil })
	require.ErrorContains(t, err, "not an event stream")
}

func TestStreamProblem(t *testing.T) {
	t.Parallel()
	c := fakeAPI(t, nil)
	err := c.RunEvents(context.Background(), "gone", func(Event) error { return nil })
	var p *Problem
	require.ErrorAs(t, err, &p)
	require.Equal(t, http.StatusNotFound, p.Status)
}

func TestLogs(t *testing.T) {
	t.Parallel()
	c := fakeAPI(t, map[string]http.HandlerFunc{
		"GET /runs/r/tasks/n/logs": jsonReply(http.StatusOK, `{"run_id":"r","node":"n","attempt":1,
			"lines":[{"ts":"2026-01-01T00:00:00.000Z","stream":"stdout","line":"hello"}]}`),
	})
	page, _, err := c.Logs(context.Background(), "r", "n", 0, 0)
	require.NoError(t, err)
	require.Equal(t, []LogLine{{Time: "2026-01-01T00:00:00.000Z", Stream: "stdout", Line: "hello"}}, page.Lines)
}
