package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/procstack"
	"github.com/stretchr/testify/require"
)

// httpTimeout bounds one API request of the suite.
const httpTimeout = 15 * time.Second

// apiClient drives a stack's api over HTTP with the write key.
type apiClient struct {
	t    testing.TB
	base string
	key  string
	hc   *http.Client
}

// client returns an API client bound to t (nil only for ready()).
func (s *Stack) client(t testing.TB) *apiClient {
	return &apiClient{t: t, base: s.URL, key: s.Key, hc: &http.Client{Timeout: httpTimeout}}
}

// apiRun is the part of GET /runs/{id} the scenarios check.
type apiRun struct {
	ID       string    `json:"id"`
	Workflow string    `json:"workflow"`
	Version  int       `json:"version"`
	Status   string    `json:"status"`
	Paused   bool      `json:"paused"`
	Error    string    `json:"error"`
	Created  string    `json:"created_at"`
	Finished string    `json:"finished_at"`
	Nodes    []apiNode `json:"nodes"`
}

// apiNode is one node of apiRun.
type apiNode struct {
	ID            string `json:"id"`
	State         string `json:"state"`
	Attempt       int    `json:"attempt"`
	Worker        string `json:"worker"`
	Error         string `json:"error"`
	WaitingReason string `json:"waiting_reason"`
	MaxAttempts   int    `json:"max_attempts"`
	Lost          int    `json:"lost"`
	// QueueWaitMs and DurationMs are the current attempt's queue wait and
	// run time; nil when the api left them out.
	QueueWaitMs *int64 `json:"queue_wait_ms"`
	DurationMs  *int64 `json:"duration_ms"`
	// StartedAt and FinishedAt are RFC 3339 times; "" when not set.
	StartedAt    string `json:"started_at"`
	FinishedAt   string `json:"finished_at"`
	PastAttempts []struct {
		Attempt int    `json:"attempt"`
		Outcome string `json:"outcome"`
		Worker  string `json:"worker"`
		Error   string `json:"error"`
	} `json:"past_attempts"`
}

// outcomes lists the outcomes of n's past attempts, oldest first.
func (n apiNode) outcomes() []string {
	out := []string{}
	for _, p := range n.PastAttempts {
		out = append(out, p.Outcome)
	}
	return out
}

// node returns the node with id.
func (r apiRun) node(t testing.TB, id string) apiNode {
	t.Helper()
	i := slices.IndexFunc(r.Nodes, func(n apiNode) bool { return n.ID == id })
	require.GreaterOrEqual(t, i, 0, "run %s has no node %s: %+v", r.ID, id, r.Nodes)
	return r.Nodes[i]
}

// raw sends a request and returns the status and body.
func (c *apiClient) raw(method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-API-Key", c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// call sends a request, requires status want and decodes the answer into out.
func (c *apiClient) call(method, path string, body []byte, want int, out any) {
	c.t.Helper()
	status, b, err := c.raw(method, path, body)
	require.NoError(c.t, err, "%s %s", method, path)
	require.Equal(c.t, want, status, "%s %s answered %s", method, path, b)
	if out != nil {
		require.NoError(c.t, json.Unmarshal(b, out), "%s %s answered %s", method, path, b)
	}
}

// ready reports whether /readyz answers 200 and GET /workers lists every worker.
func (c *apiClient) ready(workers []string) bool {
	return procstack.Ready(context.Background(), c.hc, c.base, c.key, workers) == nil
}

// register posts a definition and returns its name and version.
func (c *apiClient) register(def []byte) (string, int) {
	c.t.Helper()
	var ref struct {
		Name    string `json:"name"`
		Version int    `json:"version"`
	}
	c.call(http.MethodPost, "/workflows", def, http.StatusCreated, &ref)
	return ref.Name, ref.Version
}

// start starts a run of workflow with input (a JSON object) and returns its id.
func (c *apiClient) start(workflow, input string) string {
	c.t.Helper()
	var out struct {
		RunID string `json:"run_id"`
	}
	c.call(http.MethodPost, "/workflows/"+url.PathEscape(workflow)+"/runs", []byte(`{"input":`+input+`}`), http.StatusAccepted, &out)
	require.NotEmpty(c.t, out.RunID)
	return out.RunID
}

// run reads a run.
func (c *apiClient) run(id string) apiRun {
	c.t.Helper()
	var r apiRun
	c.call(http.MethodGet, "/runs/"+url.PathEscape(id), nil, http.StatusOK, &r)
	return r
}

// waitRun waits until cond holds for run id, and returns the run.
func (c *apiClient) waitRun(id string, within time.Duration, what string, cond func(apiRun) bool) apiRun {
	c.t.Helper()
	var r apiRun
	err := poll(within, func() (bool, error) {
		status, b, err := c.raw(http.MethodGet, "/runs/"+url.PathEscape(id), nil)
		if err != nil || status != http.StatusOK {
			return false, nil
		}
		// A fresh value per poll: decoding into the previous one would keep
		// fields (omitempty ones) that the newer answer no longer has.
		var fresh apiRun
		if err := json.Unmarshal(b, &fresh); err != nil {
			return false, fmt.Errorf("decode run %s: %w", id, err)
		}
		r = fresh
		return cond(r), nil
	})
	require.NoError(c.t, err, "run %s: %s (last: %+v)", id, what, r)
	return r
}

// waitDone waits until run id is terminal.
func (c *apiClient) waitDone(id string, within time.Duration) apiRun {
	c.t.Helper()
	return c.waitRun(id, within, "terminal", func(r apiRun) bool {
		return r.Status == "succeeded" || r.Status == "failed" || r.Status == "cancelled"
	})
}
