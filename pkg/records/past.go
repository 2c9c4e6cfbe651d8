package records

import "strings"

// PastCap bounds NodeRecord.Past: the oldest entries are dropped first.
const PastCap = 16

// Outcome says how an attempt's run on a worker ended.
type Outcome string

// Outcomes recorded in NodeRecord.Past.
const (
	// OutcomeFailed: the attempt failed (its error says why) and was retried.
	OutcomeFailed Outcome = "failed"
	// OutcomeLost: the worker running it died or stopped responding; the same
	// attempt was dispatched again without consuming an attempt.
	OutcomeLost Outcome = "lost"
	// OutcomeHandedBack: its worker stopped gracefully and gave it back; the
	// same attempt was dispatched again.
	OutcomeHandedBack Outcome = "handed_back"
	// OutcomeReset: a retry or rerun of the run reset the node.
	OutcomeReset Outcome = "reset"
)

// PastAttempt is one ended run of an attempt, kept in NodeRecord.Past.
type PastAttempt struct {
	Attempt   int     `json:"a"`
	Outcome   Outcome `json:"o"`
	Worker    string  `json:"w,omitempty"`
	QueuedAt  int64   `json:"q,omitempty"`
	StartedAt int64   `json:"t,omitempty"`
	EndedAt   int64   `json:"f,omitempty"`
	// Error is the failure or loss message.
	Error string `json:"e,omitempty"`
	// State is what a reset found the node in (OutcomeReset only).
	State NodeState `json:"s,omitempty"`
}

// EndRun appends the record's current attempt to Past as ended with outcome
// at now, with msg as its error, keeping at most PastCap entries.
func (r *NodeRecord) EndRun(outcome Outcome, msg string, now int64) {
	if r.Attempt == 0 {
		return
	}
	p := PastAttempt{Attempt: r.Attempt, Outcome: outcome, Worker: r.Worker, QueuedAt: r.QueuedAt,
		StartedAt: r.StartedAt, EndedAt: now, Error: msg}
	if outcome == OutcomeReset {
		p.State = r.State
	}
	r.Past = append(r.Past, p)
	if n := len(r.Past); n > PastCap {
		r.Past = append(r.Past[:0:0], r.Past[n-PastCap:]...)
	}
}

// Holder is who holds an attempt's claim: a worker id and the incarnation
// (one per process start) of that worker. A worker restarted under the same
// id is a new incarnation, so its predecessor's claims are recognisably
// orphaned.
type Holder struct {
	Incarnation string
	Worker      string
}

// String is the claim key's value: "<incarnation>/<worker id>".
func (h Holder) String() string { return h.Incarnation + "/" + h.Worker }

// ParseHolder reads a claim value. A value without an incarnation (written
// by a worker before incarnations existed) is all worker id.
func ParseHolder(s string) Holder {
	inc, worker, ok := strings.Cut(s, "/")
	if !ok {
		return Holder{Worker: s}
	}
	return Holder{Incarnation: inc, Worker: worker}
}
