package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/stretchr/testify/require"
)

// fakeAPI serves handlers keyed by "METHOD path" and records requests.
func fakeAPI(t *testing.T, routes map[string]http.HandlerFunc) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"title":"Not Found","status":404,"detail":"no route %s %s"}`, r.Method, r.URL.Path)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL + "/", APIKey: "k1", Timeout: 5 * time.Second, HeaderTimeout: 5 * time.Second})
	require.NoError(t, err)
	return c
}

func jsonReply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func TestNewRejectsBadURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "127.0.0.1:8080", "ftp://x", "http://"} {
		_, err := New(Options{BaseURL: u})
		require.Error(t, err, u)
	}
}

func TestApplySendsKeyAndBody(t *testing.T) {
	t.Parallel()
	var gotKey, gotBody, gotType string
	c := fakeAPI(t, map[string]http.HandlerFunc{
		"POST /workflows": func(w http.ResponseWriter, r *http.Request) {
			gotKey, gotType = r.Header.Get("X-API-Key"), r.Header.Get("Content-Type")
			b, _ := io.ReadAll(r.Body)
			gotBody = string(b)
			jsonReply(http.StatusCreated, `{"name":"etl","version":3}`)(w, r)
		},
	})
	ref, err := c.Apply(context.Background(), []byte(`{"name":"etl"}`))
	require.NoError(t, err)
	require.Equal(t, WorkflowRef{Name: "etl", Version: 3}, ref)
	require.Equal(t, "k1", gotKey)
	require.Equal(t, "application/json", gotType)
	require.Equal(t, `{"name":"etl"}`, gotBody)
}

func TestProblemErrors(t *testing.T) {
	t.Parallel()
	c := fakeAPI(t, map[string]http.HandlerFunc{
		"POST /workflows": jsonReply(http.StatusUnprocessableEntity, `{"type":"urn:braid:problem:validation","title":"Invalid workflow",
			"status":422,"detail":"2 problems","errors":[{"path":"$.nodes[0].id","message":"duplicate"},{"path":"$.name","message":"bad"}]}`),
		"GET /runs/x":  jsonReply(http.StatusBadGateway, `upstream down`),
		"GET /runs/y":  jsonReply(http.StatusInternalServerError, ``),
		"POST /runs/z": jsonReply(http.StatusAccepted, ``),
	})
	_, err := c.Apply(context.Background(), []byte(`{}`))
	var p *Problem
	require.ErrorAs(t, err, &p)
	require.Equal(t, 422, p.Status)
	require.Equal(t, "2 problems", p.Detail)
	require.Equal(t, []FieldError{{Path: "$.nodes[0].id", Message: "duplicate"}, {Path: "$.name", Message: "bad"}}, p.Errors)
	require.Equal(t, "2 problems (HTTP 422)", p.Error())

	_, _, err = c.GetRun(context.Background(), "x")
	require.ErrorAs(t, err, &p)
	require.Equal(t, Problem{apiwire.Problem{Title: "Bad Gateway", Status: 502, Detail: "upstream down"}}, *p)

	_, _, err = c.GetRun(context.Background(), "y")
	require.ErrorAs(t, err, &p)
	require.Equal(t, "Internal Server Error (HTTP 500)", p.Error())
}

func TestStartRunAndControls(t *testing.T) {
	t.Parallel()
	var body map[string]json.RawMessage
	calls := map[string]int{}
	c := fakeAPI(t, map[string]http.HandlerFunc{
		"POST /workflows/my wf/runs": func(w http.ResponseWriter, r *http.Request) {
			require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
			if k := r.Header.Get("Idempotency-Key"); k != "" {
				require.Equal(t, "nightly-2026-01-01", k)
				w.Header().Set("Idempotent-Replayed", "true")
			}
			jsonReply(http.StatusAccepted, `{"run_id":"r1","workflow":"my wf","version":1}`)(w, r)
		},
		"POST /runs/r1/cancel": func(w http.ResponseWriter, r *http.Request) { calls["cancel"]++; w.WriteHeader(http.StatusAccepted) },
		"POST /runs/r1/retry":  func(w http.ResponseWriter, r *http.Request) { calls["retry"]++; w.WriteHeader(http.StatusAccepted) },
	})
	id, replayed, err := c.StartRun(context.Background(), "my wf", nil, "")
	require.NoError(t, err)
	require.Equal(t, "r1", id)
	require.False(t, replayed)
	require.JSONEq(t, `{}`, string(body["input"]))
	id, replayed, err = c.StartRun(context.Background(), "my wf", nil, "nightly-2026-01-01")
	require.NoError(t, err)
	require.Equal(t, "r1", id)
	require.True(t, replayed, "the api's Idempotent-Replayed header is reported")
	require.NoError(t, c.Control(context.Background(), Control{Run: "r1", Verb: "cancel"}))
	require.NoError(t, c.Control(context.Background(), Control{Run: "r1", Verb: "retry"}))
	require.Equal(t, map[string]int{"cancel": 1, "retry": 1}, calls)
}

func TestStartRunWithoutRunID(t *testing.T) {
	t.Parallel()
	c := fakeAPI(t, map[string]http.HandlerFunc{"POST /workflows/w/runs": jsonReply(http.StatusAccepted, `{}`)})
	_, _, err := c.StartRun(context.Background(), "w", json.RawMessage(`{"a":1}`), "")
	require.ErrorContains(t, err, "no run_id")
}

func TestListRunsQuery(t *testing.T) {
	t.Parallel()
	var query string
	c := fakeAPI(t, map[string]http.HandlerFunc{
		"GET /runs": func(w http.ResponseWriter, r *http.Request) {
			query = r.URL.RawQuery
			jsonReply(http.StatusOK, `{"items":[{"id":"r2","workflow":"w","version":1,"status":"failed",
				"created_at":"2026-01-02T03:04:05.006Z"}],"next_cursor":"abc"}`)(w, r)
		},
	})
	page, raw, err := c.ListRuns(context.Background(), RunFilter{Workflow: "w", Status: "failed", Limit: 5, Cursor: "c 1"})
	require.NoError(t, err)
	require.Equal(t, "cursor=c+1&limit=5&status=failed&workflow=w", query)
	require.Len(t, page.Items, 1)
	require.Equal(t, "abc", page.NextCursor)
	require.Equal(t, time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC), page.Items[0].CreatedAt.UTC())
	require.Contains(t, string(raw), `"next_cursor":"abc"`)
}

func TestTimeoutBoundsRequests(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c, err := New(Options{BaseURL: srv.URL, Timeout: 100 * time.Millisecond})
	require.NoError(t, err)
	_, _, err = c.GetRun(context.Background(), "r")
	require.Error(t, err)
	var p *Problem
	require.False(t, errors.As(err, &p))
}

// TestWaitOutlastsTheStreamHeaderTimeout: a GET /runs/{id}?wait= whose
// answer comes after the streams' header timeout (the run ended later)
// is bounded by the request timeout only. The api holds every answer
// until the test releases it: the wait is released only after a stream,
// started after it, has already failed on its header timeout.
func TestWaitOutlastsTheStreamHeaderTimeout(t *testing.T) {
	t.Parallel()
	release, asked := make(chan struct{}), make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		select { // the run ends when the test says so
		case <-release:
		case <-r.Context().Done():
			return
		}
		jsonReply(http.StatusOK, `{"run_id":"r","status":"succeeded"}`)(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL, Timeout: 5 * time.Second, HeaderTimeout: 50 * time.Millisecond})
	require.NoError(t, err)
	type waited struct {
		run Run
		err error
	}
	done := make(chan waited, 1)
	go func() {
		run, _, err := c.WaitRun(context.Background(), "r", time.Second)
		done <- waited{run, err}
	}()
	<-asked // the wait is with the api

	// A stream's headers are bounded by HeaderTimeout.
	err = c.FollowLogs(context.Background(), "r", "A", 0, 0, func(LogLine) error { return nil })
	require.ErrorContains(t, err, "timeout awaiting response headers")

	// The wait, asked before the stream, is still open: it gets its answer.
	close(release)
	w := <-done
	require.NoError(t, w.err)
	require.Equal(t, "succeeded", w.run.Status)
}
