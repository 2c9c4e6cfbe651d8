// Package apiwire holds the JSON shapes of the api's requests and answers
// that both the api (services/api/apisvc) and its clients (the braid CLI)
// use, so a field is named in one place and the CLI cannot drift from the
// server. It imports nothing of ours and nothing of the server's (gin,
// Redis), so a client pays only for encoding/json and time. The field
// names are pinned by services/api/apisvc/openapi.json and its tests, the
// exact bytes of runs, tasks and schedules by apisvc's TestWireGolden.
// Times are Time: RFC 3339 text in UTC with milliseconds, left out or ""
// when unset.
package apiwire

import "encoding/json"

// ProblemContentType is the media type of error responses (RFC 9457).
const ProblemContentType = "application/problem+json"

// Problem is an RFC 9457 problem details document: the body of every
// error response.
type Problem struct {
	// Type identifies the kind of problem, e.g. "urn:braid:problem:validation".
	Type string `json:"type"`
	// Title is the short, fixed summary of the type.
	Title string `json:"title"`
	// Status repeats the HTTP status code.
	Status int `json:"status"`
	// Detail explains this occurrence in words a user can act on.
	Detail string `json:"detail"`
	// Instance is the request path that failed.
	Instance string `json:"instance"`
	// Errors lists every validation problem with its JSON path.
	Errors []FieldError `json:"errors,omitempty"`
}

// FieldError is one validation problem.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// WorkflowRef names one stored workflow version: the answer of
// POST /workflows.
type WorkflowRef struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	// Warnings name what will keep the workflow's runs waiting although it
	// registered: a handler no live worker offers (a typo, or a pool not
	// started yet). Absent when there is nothing to say.
	Warnings []string `json:"warnings,omitempty"`
}

// LogLine is one line of an attempt's log, in GET .../logs and in its
// "line" events when followed.
type LogLine struct {
	Time   string `json:"ts,omitempty"` // RFC 3339 in UTC with milliseconds
	Stream string `json:"stream"`       // stdout, stderr, handler, or unknown
	Line   string `json:"line"`
}

// LogPage is the answer of GET /runs/{id}/tasks/{node}/logs without follow.
type LogPage struct {
	RunID    string    `json:"run_id"`
	Node     string    `json:"node"`
	Instance int       `json:"instance"`
	Attempt  int       `json:"attempt"`
	Lines    []LogLine `json:"lines"`
}

// WorkflowSummary is one workflow of GET /workflows (a Page of them,
// newest first).
type WorkflowSummary struct {
	Name          string `json:"name"`
	LatestVersion int    `json:"latest_version"`
	CreatedAt     Time   `json:"created_at,omitzero"`
	UpdatedAt     Time   `json:"updated_at,omitzero"`
}

// WorkflowDoc is one version of a workflow with its definition as it was
// registered: GET /workflows/{name}[?version=N].
type WorkflowDoc struct {
	Name       string          `json:"name"`
	Version    int             `json:"version"`
	CreatedAt  Time            `json:"created_at,omitzero"`
	UpdatedAt  Time            `json:"updated_at,omitzero"`
	Definition json.RawMessage `json:"definition"`
}

// Worker is one worker process as GET /workers shows it, from the worker
// registry: what it offers (its pool is the consumer group of its handler
// set) and how busy it is.
type Worker struct {
	ID          string   `json:"id"`
	Handlers    []string `json:"handlers"`
	Group       string   `json:"group,omitempty"`
	Concurrency int      `json:"concurrency"`
	InFlight    int      `json:"in_flight"`
	StartedAt   Time     `json:"started_at,omitzero"`
	SeenAt      Time     `json:"seen_at,omitzero"`
	// Live is false once its heartbeats stopped (listed with ?all=true).
	Live bool `json:"live"`
}

// WorkerList is the body of GET /workers.
type WorkerList struct {
	Items []Worker `json:"items"`
}
