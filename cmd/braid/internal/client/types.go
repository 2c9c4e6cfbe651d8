package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/apiwire"
)

// WorkflowRef names one stored workflow version.
type WorkflowRef = apiwire.WorkflowRef

// Run is a run as GET /runs/{id} returns it (list entries leave Nodes empty).
type Run struct {
	ID         string `json:"id"`
	Workflow   string `json:"workflow"`
	Version    int    `json:"version"`
	Status     string `json:"status"`
	Error      string `json:"error,omitempty"`
	CreatedAt  Time   `json:"created_at"`
	StartedAt  Time   `json:"started_at"`
	FinishedAt Time   `json:"finished_at"`
	Nodes      Nodes  `json:"nodes,omitempty"`
}

// Node is one node of a run.
type Node struct {
	ID            string `json:"id"`
	State         string `json:"state"`
	Attempt       int    `json:"attempt"`
	QueuedAt      Time   `json:"queued_at"`
	StartedAt     Time   `json:"started_at"`
	FinishedAt    Time   `json:"finished_at"`
	Worker        string `json:"worker,omitempty"`
	Error         string `json:"error,omitempty"`
	Reason        string `json:"reason,omitempty"`
	WaitingReason string `json:"waiting_reason,omitempty"`
	MaxAttempts   int    `json:"max_attempts,omitempty"`
	// Lost counts losses of the current attempt with its worker.
	Lost int `json:"lost,omitempty"`
	// PastAttempts are earlier runs of the node's attempts, oldest first.
	PastAttempts []PastAttempt `json:"past_attempts,omitempty"`
}

// PastAttempt is an earlier run of one of a node's attempts: failed and
// retried, lost with its worker, handed back, or reset.
type PastAttempt struct {
	Attempt int    `json:"attempt"`
	Outcome string `json:"outcome"`
	Worker  string `json:"worker,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Duration is FinishedAt-StartedAt, or now-StartedAt while running, or 0.
func (n Node) Duration(now time.Time) time.Duration {
	if n.StartedAt.IsZero() {
		return 0
	}
	end := n.FinishedAt.Time
	if end.IsZero() {
		end = now
	}
	return max(end.Sub(n.StartedAt.Time), 0)
}

// Nodes is a run's node list. It decodes from an array of nodes or from an
// object keyed by node id (then sorted by id).
type Nodes []Node

// UnmarshalJSON accepts an array or an object of nodes.
func (ns *Nodes) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var m map[string]Node
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		out := make(Nodes, 0, len(m))
		for id, n := range m {
			if n.ID == "" {
				n.ID = id
			}
			out = append(out, n)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
		*ns = out
		return nil
	}
	var list []Node
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*ns = list
	return nil
}

// RunPage is one page of GET /runs.
type RunPage struct {
	Runs       []Run  `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// Time is a timestamp that decodes from RFC 3339 text, Unix milliseconds,
// "" or null (the zero time).
type Time struct{ time.Time }

// UnmarshalJSON accepts "2006-01-02T15:04:05Z", 1700000000000, "" or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	switch {
	case s == "null" || s == `""`:
		t.Time = time.Time{}
		return nil
	case len(s) > 0 && s[0] == '"':
		var txt string
		if err := json.Unmarshal(b, &txt); err != nil {
			return err
		}
		v, err := time.Parse(time.RFC3339Nano, txt)
		if err != nil {
			return fmt.Errorf("time %q: %w", txt, err)
		}
		t.Time = v
		return nil
	}
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("time %s: want RFC 3339 text or Unix milliseconds", s)
	}
	if ms > 0 {
		t.Time = time.UnixMilli(ms)
	}
	return nil
}

// MarshalJSON writes RFC 3339 text, or null for the zero time.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.Time.Format(time.RFC3339Nano))
}
