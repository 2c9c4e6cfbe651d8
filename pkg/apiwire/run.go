package apiwire

import "encoding/json"

// RunSummary is one item of GET /runs, and the head of a Run.
type RunSummary struct {
	ID       string `json:"id"`
	Workflow string `json:"workflow"`
	Version  int    `json:"version"`
	// Status is pending, running, succeeded, failed, cancelling or cancelled.
	Status     string `json:"status"`
	Paused     bool   `json:"paused"`
	CreatedAt  Time   `json:"created_at,omitzero"`
	StartedAt  Time   `json:"started_at,omitzero"`
	FinishedAt Time   `json:"finished_at,omitzero"`
	Error      string `json:"error,omitempty"`
	// RequestedBy is the name of the api key that started the run.
	RequestedBy string `json:"requested_by,omitempty"`
}

// Run is the answer of GET /runs/{id} and the data of its SSE snapshot
// event: the summary, the input and every node of the definition in order.
type Run struct {
	RunSummary
	// Seq is the sequence number of the run's last published event.
	Seq   uint64          `json:"seq"`
	Input json.RawMessage `json:"input"`
	// DurationMs is finished-started (now-started while running), in ms;
	// nil before the run starts.
	DurationMs *int64 `json:"duration_ms,omitempty"`
	Nodes      []Node `json:"nodes"`
}

// RunPage is one page of GET /runs, newest first.
type RunPage = Page[RunSummary]

// Node is one node of a run: its place in the graph and its state.
type Node struct {
	ID        string   `json:"id"`
	DependsOn []string `json:"depends_on"`
	NodeFields
}

// NodeFields are the state of a node, or of one instance of a fan-out
// node, that a run's nodes and the api's task rows share.
type NodeFields struct {
	Handler string `json:"handler"`
	// State is pending, queued, running, succeeded, failed, retry_wait,
	// skipped or cancelled.
	State      string `json:"state"`
	Attempt    int    `json:"attempt"` // 1-based; 0 before the first dispatch
	QueuedAt   Time   `json:"queued_at,omitzero"`
	StartedAt  Time   `json:"started_at,omitzero"`
	FinishedAt Time   `json:"finished_at,omitzero"` // set once the node is terminal
	// QueueWaitMs is how long the current attempt waited to start, in ms:
	// started-queued; now-queued while queued; ended-queued if it ended
	// without starting; nil while no attempt is queued. Only the current
	// attempt: a retry or re-dispatch resets queued_at, and earlier runs
	// carry their own figures in PastAttempts.
	QueueWaitMs *int64 `json:"queue_wait_ms,omitempty"`
	// DurationMs is how long the current attempt executed, in ms:
	// finished-started (now-started while running; the failure time for an
	// attempt waiting to retry); nil before it starts.
	DurationMs *int64 `json:"duration_ms,omitempty"`
	Worker     string `json:"worker,omitempty"`
	Error      string `json:"error,omitempty"`
	// Reason explains a skip or a cancellation.
	Reason string `json:"reason,omitempty"`
	// RetryAt is when a node in retry_wait dispatches its next attempt.
	RetryAt Time `json:"retry_at,omitzero"`
	// WaitingReason says why a node that is not running waits.
	WaitingReason string `json:"waiting_reason,omitempty"`
	// ApprovalMessage is an approval node's config message, for whoever
	// decides.
	ApprovalMessage string `json:"approval_message,omitempty"`
	// MaxAttempts is the highest attempt number the current try may reach:
	// what the node's retry policy allows, counted on from the attempts
	// made before a retry or rerun of the run last reset the node (so
	// attempt 3 of 4 after one reset of a node allowing 2); 0 when unknown.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// Lost counts losses of the current attempt with its worker.
	Lost int `json:"lost,omitempty"`
	// PastAttempts are earlier runs of the node's attempts, oldest first.
	PastAttempts []PastAttempt `json:"past_attempts,omitempty"`
	// Instances tallies a fan-out node's instances (nil for other nodes
	// and for instance rows).
	Instances *InstanceCounts `json:"instances,omitempty"`
}

// PastAttempt is an earlier run of one of a node's attempts: failed and
// retried, lost with its worker, handed back, or reset by a retry or rerun.
type PastAttempt struct {
	Attempt int `json:"attempt"`
	// Outcome is failed, lost, handed_back or reset.
	Outcome   string `json:"outcome"`
	Worker    string `json:"worker,omitempty"`
	QueuedAt  Time   `json:"queued_at,omitzero"`
	StartedAt Time   `json:"started_at,omitzero"`
	EndedAt   Time   `json:"ended_at,omitzero"`
	// QueueWaitMs is started-queued in ms (ended-queued if it never
	// started); nil without a queued time.
	QueueWaitMs *int64 `json:"queue_wait_ms,omitempty"`
	// DurationMs is ended-started in ms; nil if it never started.
	DurationMs *int64 `json:"duration_ms,omitempty"`
	Error      string `json:"error,omitempty"`
	// State is what a reset found the node in (outcome reset only).
	State string `json:"state,omitempty"`
}

// InstanceCounts tallies a fan-out node's instances. Running counts the
// instances in flight or waiting to retry (what the node's concurrency caps).
type InstanceCounts struct {
	Total     int `json:"total"`
	Pending   int `json:"pending"`
	Running   int `json:"running"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
}
