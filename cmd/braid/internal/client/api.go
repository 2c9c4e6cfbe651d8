package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Apply registers a workflow definition: POST /workflows.
func (c *Client) Apply(ctx context.Context, def []byte) (WorkflowRef, error) {
	var ref WorkflowRef
	_, err := c.doJSON(ctx, http.MethodPost, "/workflows", def, &ref)
	return ref, err
}

// StartRun starts a run of workflow with input (a JSON object, or nil for
// {}): POST /workflows/{name}/runs. With an idempotency key (the
// Idempotency-Key header), a request the api has seen with that key and
// the same input starts nothing and names the run it started then:
// replayed is true. It returns the run id.
func (c *Client) StartRun(ctx context.Context, workflow string, input json.RawMessage, idempotencyKey string) (id string, replayed bool, err error) {
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	body, err := json.Marshal(struct {
		Input json.RawMessage `json:"input"`
	}{input})
	if err != nil {
		return "", false, fmt.Errorf("start run of %s: %w", workflow, err)
	}
	var hdr http.Header
	if idempotencyKey != "" {
		hdr = http.Header{"Idempotency-Key": {idempotencyKey}}
	}
	var out struct {
		RunID string `json:"run_id"`
	}
	_, got, err := c.doJSONHeader(ctx, http.MethodPost, "/workflows/"+url.PathEscape(workflow)+"/runs", hdr, body, &out)
	if err != nil {
		return "", false, err
	}
	if out.RunID == "" {
		return "", false, fmt.Errorf("start run of %s: the answer has no run_id", workflow)
	}
	return out.RunID, got.Get("Idempotent-Replayed") == "true", nil
}

// RunFilter selects runs for ListRuns; zero fields do not filter.
type RunFilter struct {
	Workflow string
	Status   string
	Limit    int
	Cursor   string
}

// query encodes f as URL query parameters.
func (f RunFilter) query() string {
	q := url.Values{}
	if f.Workflow != "" {
		q.Set("workflow", f.Workflow)
	}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	return pageQuery(q, f.Limit, f.Cursor)
}

// pageQuery adds a page's limit (when positive) and cursor (when set) to q
// and encodes it as a query string: "" when q is empty, else "?...".
func pageQuery(q url.Values, limit int, cursor string) string {
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// ListRuns returns one page of runs, newest first: GET /runs.
func (c *Client) ListRuns(ctx context.Context, f RunFilter) (RunPage, json.RawMessage, error) {
	var page RunPage
	raw, err := c.doJSON(ctx, http.MethodGet, "/runs"+f.query(), nil, &page)
	return page, raw, err
}

// GetRun returns a run with its nodes: GET /runs/{id}.
func (c *Client) GetRun(ctx context.Context, id string) (Run, json.RawMessage, error) {
	var run Run
	raw, err := c.doJSON(ctx, http.MethodGet, "/runs/"+url.PathEscape(id), nil, &run)
	return run, raw, err
}

// WaitRun reads a run once it has ended, or after wait with the run as it
// is then: GET /runs/{id}?wait=. Keep wait under Config.Timeout.
func (c *Client) WaitRun(ctx context.Context, id string, wait time.Duration) (Run, json.RawMessage, error) {
	var run Run
	raw, err := c.doJSON(ctx, http.MethodGet, "/runs/"+url.PathEscape(id)+"?wait="+url.QueryEscape(wait.String()), nil, &run)
	return run, raw, err
}

// Control is one run control request.
type Control struct {
	Run string
	// Verb is cancel, retry, pause, resume or rerun (POST /runs/{id}/{verb}),
	// or approve or reject (POST /runs/{id}/tasks/{node}/{verb}).
	Verb string
	// Node is the approval node (approve, reject).
	Node string
	// From is the node rerun starts from (?from=).
	From string
	// Reason is recorded with the request ({"reason"}), when not empty.
	Reason string
}

// Control sends a run control request; the api answers 202 once it is
// queued for the orchestrator (409 when the run's state refuses it).
func (c *Client) Control(ctx context.Context, r Control) error {
	path := "/runs/" + url.PathEscape(r.Run) + "/"
	if r.Node != "" {
		path += "tasks/" + url.PathEscape(r.Node) + "/"
	}
	path += url.PathEscape(r.Verb)
	if r.From != "" {
		path += "?from=" + url.QueryEscape(r.From)
	}
	var body []byte
	if r.Reason != "" {
		var err error
		if body, err = json.Marshal(struct {
			Reason string `json:"reason"`
		}{r.Reason}); err != nil {
			return fmt.Errorf("%s run %s: %w", r.Verb, r.Run, err)
		}
	}
	_, err := c.doJSON(ctx, http.MethodPost, path, body, nil)
	return err
}

// Task is what `braid output` reads of GET /runs/{id}/tasks/{node}: a
// node's (or one fan-out instance's) state, error and output. Output is nil
// when the answer has none (the node has not finished, or failed without
// one) and the JSON literal null when its output is null.
type Task struct {
	RunID    string          `json:"run_id"`
	Node     string          `json:"node"`
	Instance int             `json:"instance"`
	State    string          `json:"state"`
	Error    string          `json:"error,omitempty"`
	Output   json.RawMessage `json:"output,omitempty"`
}

// Task reads node of run, or instance inst of a fan-out node when inst is
// not negative: GET /runs/{id}/tasks/{node}. A fan-out node's own answer
// (inst < 0) is its output array with one instance row, not a page.
func (c *Client) Task(ctx context.Context, run, node string, inst int) (Task, json.RawMessage, error) {
	q := url.Values{}
	if inst >= 0 {
		q.Set("instance", strconv.Itoa(inst))
	} else {
		q.Set("limit", "1")
	}
	var t Task
	raw, err := c.doJSON(ctx, http.MethodGet, "/runs/"+url.PathEscape(run)+"/tasks/"+url.PathEscape(node)+"?"+q.Encode(), nil, &t)
	return t, raw, err
}

// DeleteRun deletes an ended run whole: DELETE /runs/{id}.
func (c *Client) DeleteRun(ctx context.Context, id string) error {
	_, err := c.doJSON(ctx, http.MethodDelete, "/runs/"+url.PathEscape(id), nil, nil)
	return err
}
