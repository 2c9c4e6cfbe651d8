package records

import "encoding/json"

// NodeRecord is the durable state of one node instance: one field of the
// run's nodes hash in Redis, JSON with short keys so that a completed node
// costs well under 300 bytes. Times are Unix milliseconds; zero means unset.
//
// The worker's claim and heartbeat scripts read the "s" and "a" keys from Lua,
// so those two names are part of the storage contract.
//
// Encode and DecodeNodeRecord spell the fields out without reflection (see
// appendRecord and fastDecoder.field), so a new field, here, in FanOutCounts
// or in PastAttempt, needs its line there too; the codec tests set every
// field by reflection and fail until it has one.
type NodeRecord struct {
	State NodeState `json:"s"`
	// Attempt is the current attempt number, 1-based; 0 before the first dispatch.
	Attempt int `json:"a,omitempty"`
	// ParentsLeft counts parents that have not reached a terminal state.
	ParentsLeft int   `json:"p,omitempty"`
	QueuedAt    int64 `json:"q,omitempty"`
	StartedAt   int64 `json:"t,omitempty"`
	FinishedAt  int64 `json:"f,omitempty"`
	// Worker is the id of the worker running or that ran the current attempt.
	Worker string `json:"w,omitempty"`
	// Error is the failure message of the last failed attempt.
	Error string `json:"e,omitempty"`
	// Reason explains a skip or cancellation.
	Reason string `json:"r,omitempty"`
	// UpstreamFailed marks a skip caused by a failed ancestor; trigger rules
	// count it as a failure (Airflow's upstream_failed).
	UpstreamFailed bool `json:"u,omitempty"`
	// WhenSkipped marks a skip because the node's own `when` was false.
	WhenSkipped bool `json:"k,omitempty"`
	// RetryAt is when a node in retry_wait dispatches its next attempt.
	RetryAt int64 `json:"ra,omitempty"`
	// Deadline is when the orchestrator fails the current attempt as timed out (0 = none).
	Deadline int64 `json:"d,omitempty"`
	// WakeAt is when a running built-in wait node wakes and succeeds (0 = not asleep).
	WakeAt int64 `json:"wk,omitempty"`
	// Lost counts how often the current attempt was lost with its worker
	// (killed, gone, claim lapsed) and dispatched again unchanged.
	Lost int `json:"l,omitempty"`
	// AttemptBase is Attempt when a retry or rerun of the run last reset
	// this node instance: the attempts before it, so the reset starts a
	// fresh budget of its policy's max_attempts (attempts AttemptBase+1 up
	// to AttemptBase+max_attempts) while attempt numbers, and with them the
	// idempotency keys, keep counting up.
	AttemptBase int `json:"ab,omitempty"`
	// Past are the earlier runs of this node instance that ended without
	// being the record's current attempt: failed attempts that were
	// retried, attempts lost with their worker or handed back, and what a
	// retry or rerun reset. Oldest first, at most PastCap; empty on the
	// happy path, so a node that succeeds first time pays nothing for it.
	Past []PastAttempt `json:"h,omitempty"`
	// FanOutCounts tally a launched fan-out node's instances (zero for plain nodes
	// and for instance records).
	FanOutCounts
}

// FanOutCounts are the tallies of a fan-out node's instances, kept in its node
// record so that a completion costs O(1) and readers need no scan. The
// instances' own records live in a hash of their own (see statestore.Keys).
//
// The claim and heartbeat scripts read "fo" from Lua: a node record with fo
// set sends them to the instance hash. That name is part of the storage contract.
type FanOutCounts struct {
	// FanOut marks a launched fan-out node.
	FanOut bool `json:"fo,omitempty"`
	// Count is the number of instances (foreach items or the parallel count).
	Count int `json:"n,omitempty"`
	// Next is the lowest index never started: instances [0, Next) have records.
	Next int `json:"nx,omitempty"`
	// Active counts instances in flight or waiting to retry (queued, running,
	// retry_wait); the node's concurrency caps it.
	Active int `json:"na,omitempty"`
	// Succeeded, Failed and Cancelled count terminal instances.
	Succeeded int `json:"ns,omitempty"`
	Failed    int `json:"nf,omitempty"`
	Cancelled int `json:"nc,omitempty"`
	// InstanceBase is the attempt number the instances of this launch count
	// on from, and InstanceHigh the highest instance attempt started in
	// any launch of the node: a rerun that starts every instance afresh
	// sets the next launch's InstanceBase to InstanceHigh, so an instance's
	// attempt numbers (and idempotency keys, log streams, claims) never
	// repeat one of an earlier launch.
	InstanceBase int `json:"ib,omitempty"`
	InstanceHigh int `json:"ih,omitempty"`
}

// MaxAttempt is the highest attempt number the current try may reach:
// AttemptBase plus what the retry policy allows (attempts).
func (r NodeRecord) MaxAttempt(attempts int) int { return r.AttemptBase + attempts }

// Done returns how many instances are terminal.
func (c FanOutCounts) Done() int { return c.Succeeded + c.Failed + c.Cancelled }

// Encode returns r as compact JSON: byte for byte what json.Marshal
// writes for it, built without reflection and, unless a string needs
// escaping, in one allocation, because the orchestrator encodes every
// record it changes.
func (r NodeRecord) Encode() []byte {
	return r.appendRecord(make([]byte, 0, r.sizeHint()))
}

// DecodeNodeRecord parses a stored node record, with json.Unmarshal's
// result and error for every input. The records Encode writes without
// Past take a path without reflection, because the api decodes a run's
// records on every read; anything else goes to json.Unmarshal.
func DecodeNodeRecord(b []byte) (NodeRecord, error) {
	if r, ok := decodeFast(b); ok {
		return r, nil
	}
	var r NodeRecord
	err := json.Unmarshal(b, &r)
	return r, err
}

// DecodeNodeRecordString is DecodeNodeRecord of a record held as a string
// (a Redis reply): the same result and error, without copying the record
// when it takes the fast path — the strings of the result are then
// substrings of s.
func DecodeNodeRecordString(s string) (NodeRecord, error) {
	if r, ok := decodeFast(s); ok {
		return r, nil
	}
	return DecodeNodeRecord([]byte(s))
}
