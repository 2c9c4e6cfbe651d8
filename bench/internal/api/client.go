// Package api is the benchmarks' HTTP client of the Braid api: register a
// workflow, start runs, read runs and tasks. It speaks only the public REST
// API (SPEC §8).
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/braidhq/braid/pkg/testkit/procstack"
)

// requestTimeout bounds one request.
const requestTimeout = 30 * time.Second

// Client calls one api with one key. Safe for concurrent use.
type Client struct {
	base, key string
	hc        *http.Client
}

// New returns a client of the api at base (e.g. http://127.0.0.1:8080)
// authenticating with key. It keeps up to conns idle connections, so many
// goroutines can call it without re-dialing.
func New(base, key string, conns int) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = conns, conns
	return &Client{base: base, key: key, hc: &http.Client{Timeout: requestTimeout, Transport: tr}}
}

// StatusError is an answer with an unexpected HTTP status.
type StatusError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s answered %d: %.300s", e.Method, e.Path, e.Status, e.Body)
}

// Do sends a request with body (nil for none), requires status want and
// decodes the answer into out (when non-nil).
func (c *Client) Do(ctx context.Context, method, path string, body []byte, want int, out any) error {
	_, err := c.do(ctx, method, path, body, want, out)
	return err
}

// Received is when an answer was held and what decoding it took after.
type Received struct {
	// At is when the answer's last byte had been read.
	At time.Time
	// Decode is the time json.Unmarshal took on it afterwards.
	Decode time.Duration
}

// do is Do that also says when the answer's last byte was read and how
// long its decoding took after that.
func (c *Client) do(ctx context.Context, method, path string, body []byte, want int, out any) (Received, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return Received{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("X-API-Key", c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return Received{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	got := Received{At: time.Now()}
	if err != nil {
		return got, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return got, &StatusError{Method: method, Path: path, Status: resp.StatusCode, Body: string(b)}
	}
	if out != nil {
		err := json.Unmarshal(b, out)
		got.Decode = time.Since(got.At)
		if err != nil {
			return got, fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return got, nil
}

// Register posts a workflow definition (JSON) and returns its name.
func (c *Client) Register(ctx context.Context, def []byte) (string, error) {
	var ref struct {
		Name string `json:"name"`
	}
	err := c.Do(ctx, http.MethodPost, "/workflows", def, http.StatusCreated, &ref)
	return ref.Name, err
}

// Start requests a run of workflow with an empty input and returns its id.
func (c *Client) Start(ctx context.Context, workflow string) (string, error) {
	var out struct {
		RunID string `json:"run_id"`
	}
	if err := c.Do(ctx, http.MethodPost, "/workflows/"+url.PathEscape(workflow)+"/runs", []byte(`{"input":{}}`), http.StatusAccepted, &out); err != nil {
		return "", err
	}
	if out.RunID == "" {
		return "", fmt.Errorf("start workflow=%s: answer has no run_id", workflow)
	}
	return out.RunID, nil
}

// StartAndWait requests a run of workflow with an empty input and waits up
// to wait for it to end in the same request (POST ...?wait=), returning the
// ended run and when its answer was held. A run still going when the wait
// is over is an error.
func (c *Client) StartAndWait(ctx context.Context, workflow string, wait time.Duration) (Run, Received, error) {
	var r Run
	path := "/workflows/" + url.PathEscape(workflow) + "/runs?wait=" + wait.String()
	got, err := c.do(ctx, http.MethodPost, path, []byte(`{"input":{}}`), http.StatusOK, &r)
	var se *StatusError
	if errors.As(err, &se) && se.Status == http.StatusAccepted {
		return r, got, fmt.Errorf("start workflow=%s: run not ended within %s: %w", workflow, wait, se)
	}
	if err == nil && r.ID == "" {
		err = fmt.Errorf("start workflow=%s: answer has no run id", workflow)
	}
	return r, got, err
}

// waitStep is each request's ?wait= in RunAndWait: under the client's
// request timeout.
const waitStep = 25 * time.Second

// RunAndWait requests a run of workflow with an empty input and ?wait=,
// and while the answer is 202 (the run goes on) waits more with GET
// /runs/{id}?wait=, until the run has ended or within has passed (an
// error). It returns the ended run and when the answer holding it was
// received (its last byte read) and decoded.
func (c *Client) RunAndWait(ctx context.Context, workflow string, within time.Duration) (Run, Received, error) {
	deadline := time.Now().Add(within)
	step := func() time.Duration { return max(min(waitStep, time.Until(deadline)), time.Millisecond) }
	r, got, err := c.StartAndWait(ctx, workflow, step())
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusAccepted {
		return r, got, err
	}
	var acc struct {
		RunID string `json:"run_id"`
	}
	if jerr := json.Unmarshal([]byte(se.Body), &acc); jerr != nil || acc.RunID == "" {
		return r, got, fmt.Errorf("start workflow=%s: 202 without run_id: %.200s", workflow, se.Body)
	}
	for {
		r, got, err = c.getRunWait(ctx, acc.RunID, step())
		if err != nil || r.Terminal() {
			return r, got, err
		}
		if time.Now().After(deadline) {
			return r, got, fmt.Errorf("run %s not ended within %s (status %s)", acc.RunID, within, r.Status)
		}
	}
}

// getRunWait reads a run with GET /runs/{id}?wait=, which answers once
// the run has ended or the wait has passed.
func (c *Client) getRunWait(ctx context.Context, id string, wait time.Duration) (Run, Received, error) {
	var r Run
	got, err := c.do(ctx, http.MethodGet, "/runs/"+url.PathEscape(id)+"?wait="+wait.String(), nil, http.StatusOK, &r)
	return r, got, err
}

// Run is the part of GET /runs/{id} the benchmarks read.
type Run struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	Error      string `json:"error"`
	CreatedAt  string `json:"created_at"`
	StartedAt  string `json:"started_at"`
	FinishedAt string `json:"finished_at"`
	Nodes      []Node `json:"nodes"`
}

// Node is one node of a Run.
type Node struct {
	ID         string `json:"id"`
	State      string `json:"state"`
	QueuedAt   string `json:"queued_at"`
	FinishedAt string `json:"finished_at"`
}

// Terminal reports whether the run has ended.
func (r Run) Terminal() bool {
	return r.Status == "succeeded" || r.Status == "failed" || r.Status == "cancelled"
}

// WallMs is finished_at − created_at in milliseconds (the api writes both
// with millisecond precision), or an error when either is missing.
func (r Run) WallMs() (float64, error) {
	c, err1 := time.Parse(time.RFC3339Nano, r.CreatedAt)
	f, err2 := time.Parse(time.RFC3339Nano, r.FinishedAt)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("run %s: created_at %q or finished_at %q unreadable", r.ID, r.CreatedAt, r.FinishedAt)
	}
	return float64(f.Sub(c).Microseconds()) / 1000, nil
}

// GetRun reads a run.
func (c *Client) GetRun(ctx context.Context, id string) (Run, error) {
	var r Run
	err := c.Do(ctx, http.MethodGet, "/runs/"+url.PathEscape(id), nil, http.StatusOK, &r)
	return r, err
}

// WaitRun polls GET /runs/{id} every pause until the run is terminal or
// within passes, and returns it.
func (c *Client) WaitRun(ctx context.Context, id string, within, pause time.Duration) (Run, error) {
	deadline := time.Now().Add(within)
	for {
		r, err := c.GetRun(ctx, id)
		if err != nil {
			return r, err
		}
		if r.Terminal() {
			return r, nil
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("run %s not finished within %s (status %s)", id, within, r.Status)
		}
		if err := sleep(ctx, pause); err != nil {
			return r, err
		}
	}
}

// sleep pauses for d or until ctx ends. Go's timers wake an idle process
// no sooner than about 1 ms later (the runtime's poller waits in whole
// milliseconds), so a pause under 1 ms blocks the thread in the kernel
// instead (see pause_linux.go), keeping a sub-millisecond poll at the
// period its callers name.
func sleep(ctx context.Context, d time.Duration) error {
	if d < time.Millisecond {
		shortPause(d)
		return ctx.Err()
	}
	return clock.Sleep(ctx, d)
}

// Task is the part of GET /runs/{id}/tasks/{node} the benchmarks read.
type Task struct {
	State  string          `json:"state"`
	Output json.RawMessage `json:"output"`
}

// GetTask reads one node of a run with its output.
func (c *Client) GetTask(ctx context.Context, run, node string) (Task, error) {
	var t Task
	err := c.Do(ctx, http.MethodGet, "/runs/"+url.PathEscape(run)+"/tasks/"+url.PathEscape(node), nil, http.StatusOK, &t)
	return t, err
}

// Ready reports whether /readyz answers 200 and GET /workers lists every one of workers.
func (c *Client) Ready(ctx context.Context, workers []string) bool {
	return procstack.Ready(ctx, c.hc, c.base, c.key, workers) == nil
}
