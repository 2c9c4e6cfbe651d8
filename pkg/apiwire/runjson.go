package apiwire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"

	"github.com/braidhq/braid/pkg/jsonstr"
)

// AppendJSON appends r as a json.Encoder with SetEscapeHTML(false) writes
// it, byte for byte, but without the Encoder's trailing newline.
//
// It exists for the api's answers with a whole run (GET /runs/{id}, and
// ?wait= when the run ends): a run of 10,000 nodes is a document of
// megabytes, and encoding/json's reflection, with the compaction it runs
// over every Time's MarshalJSON, cost milliseconds of CPU per answer on
// the hot path of ?wait=. Every field is written by hand in the order and
// with the omitempty/omitzero rules its struct tags give; the tests and
// FuzzRunAppendJSON compare it with encoding/json, so a field added to
// Run, Node, NodeFields, PastAttempt or InstanceCounts must be added here.
//
// As with encoding/json, Input is validated and compacted, and Input that
// is not valid JSON (a non-nil empty one included) is an error, the same
// *json.MarshalerError; b is then returned with nothing appended.
func (r *Run) AppendJSON(b []byte) ([]byte, error) {
	start := len(b)
	b = slices.Grow(b, runBytesHint+nodeBytesHint*len(r.Nodes))
	b = r.RunSummary.appendFields(append(b, '{'))
	b = strconv.AppendUint(append(b, `,"seq":`...), r.Seq, 10)
	b, err := appendRaw(append(b, `,"input":`...), r.Input)
	if err != nil {
		return b[:start], err
	}
	b = appendMs(b, `,"duration_ms":`, r.DurationMs)
	b = appendNodes(append(b, `,"nodes":`...), r.Nodes)
	return append(b, '}'), nil
}

// runBytesHint and nodeBytesHint estimate the size of a run's document
// without its nodes and of one node's: AppendJSON grows a buffer short of
// their sum once instead of step by step through the megabytes of a large
// run. A finished node of a common shape takes about 280 bytes.
const (
	runBytesHint  = 512
	nodeBytesHint = 320
)

// appendFields appends s's members without braces.
func (s *RunSummary) appendFields(b []byte) []byte {
	b = appendString(append(b, `"id":`...), s.ID)
	b = appendString(append(b, `,"workflow":`...), s.Workflow)
	b = strconv.AppendInt(append(b, `,"version":`...), int64(s.Version), 10)
	b = appendString(append(b, `,"status":`...), s.Status)
	b = strconv.AppendBool(append(b, `,"paused":`...), s.Paused)
	b = appendTime(b, `,"created_at":`, s.CreatedAt)
	b = appendTime(b, `,"started_at":`, s.StartedAt)
	b = appendTime(b, `,"finished_at":`, s.FinishedAt)
	b = appendText(b, `,"error":`, s.Error)
	return appendText(b, `,"requested_by":`, s.RequestedBy)
}

// appendRaw appends raw as encoding/json writes a json.RawMessage: null
// when nil, else compacted after checking it is valid JSON.
func appendRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(b, "null"...), nil
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return b, &json.MarshalerError{Type: reflect.TypeFor[json.RawMessage](), Err: err}
	}
	return buf.Bytes(), nil
}

// appendNodes appends nodes as a JSON array, null when nil.
func appendNodes(b []byte, nodes []Node) []byte {
	if nodes == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range nodes {
		if i > 0 {
			b = append(b, ',')
		}
		b = nodes[i].appendJSON(b)
	}
	return append(b, ']')
}

// appendJSON appends n as a JSON object.
func (n *Node) appendJSON(b []byte) []byte {
	b = appendString(append(b, `{"id":`...), n.ID)
	b = appendStrings(append(b, `,"depends_on":`...), n.DependsOn)
	b = n.NodeFields.appendFields(append(b, ','))
	return append(b, '}')
}

// appendFields appends f's members without braces.
func (f *NodeFields) appendFields(b []byte) []byte {
	b = appendString(append(b, `"handler":`...), f.Handler)
	b = appendString(append(b, `,"state":`...), f.State)
	b = strconv.AppendInt(append(b, `,"attempt":`...), int64(f.Attempt), 10)
	b = appendTime(b, `,"queued_at":`, f.QueuedAt)
	b = appendTime(b, `,"started_at":`, f.StartedAt)
	b = appendTime(b, `,"finished_at":`, f.FinishedAt)
	b = appendMs(b, `,"queue_wait_ms":`, f.QueueWaitMs)
	b = appendMs(b, `,"duration_ms":`, f.DurationMs)
	b = appendText(b, `,"worker":`, f.Worker)
	b = appendText(b, `,"error":`, f.Error)
	b = appendText(b, `,"reason":`, f.Reason)
	b = appendTime(b, `,"retry_at":`, f.RetryAt)
	b = appendText(b, `,"waiting_reason":`, f.WaitingReason)
	b = appendText(b, `,"approval_message":`, f.ApprovalMessage)
	b = appendCount(b, `,"max_attempts":`, f.MaxAttempts)
	b = appendCount(b, `,"lost":`, f.Lost)
	b = appendPast(b, f.PastAttempts)
	if f.Instances != nil {
		b = f.Instances.appendJSON(append(b, `,"instances":`...))
	}
	return b
}

// appendPast appends the past_attempts member, left out when there are
// none (omitempty).
func appendPast(b []byte, past []PastAttempt) []byte {
	if len(past) == 0 {
		return b
	}
	b = append(b, `,"past_attempts":[`...)
	for i := range past {
		if i > 0 {
			b = append(b, ',')
		}
		b = past[i].appendJSON(b)
	}
	return append(b, ']')
}

// appendJSON appends p as a JSON object.
func (p *PastAttempt) appendJSON(b []byte) []byte {
	b = strconv.AppendInt(append(b, `{"attempt":`...), int64(p.Attempt), 10)
	b = appendString(append(b, `,"outcome":`...), p.Outcome)
	b = appendText(b, `,"worker":`, p.Worker)
	b = appendTime(b, `,"queued_at":`, p.QueuedAt)
	b = appendTime(b, `,"started_at":`, p.StartedAt)
	b = appendTime(b, `,"ended_at":`, p.EndedAt)
	b = appendMs(b, `,"queue_wait_ms":`, p.QueueWaitMs)
	b = appendMs(b, `,"duration_ms":`, p.DurationMs)
	b = appendText(b, `,"error":`, p.Error)
	b = appendText(b, `,"state":`, p.State)
	return append(b, '}')
}

// appendJSON appends c as a JSON object.
func (c *InstanceCounts) appendJSON(b []byte) []byte {
	b = strconv.AppendInt(append(b, `{"total":`...), int64(c.Total), 10)
	b = strconv.AppendInt(append(b, `,"pending":`...), int64(c.Pending), 10)
	b = strconv.AppendInt(append(b, `,"running":`...), int64(c.Running), 10)
	b = strconv.AppendInt(append(b, `,"succeeded":`...), int64(c.Succeeded), 10)
	b = strconv.AppendInt(append(b, `,"failed":`...), int64(c.Failed), 10)
	b = strconv.AppendInt(append(b, `,"cancelled":`...), int64(c.Cancelled), 10)
	return append(b, '}')
}

// appendTime appends key and t, or nothing for the zero time (omitzero).
func appendTime(b []byte, key string, t Time) []byte {
	if t.IsZero() {
		return b
	}
	return t.appendJSON(append(b, key...))
}

// appendMs appends key and *ms, or nothing when ms is nil (omitempty).
func appendMs(b []byte, key string, ms *int64) []byte {
	if ms == nil {
		return b
	}
	return strconv.AppendInt(append(b, key...), *ms, 10)
}

// appendText appends key and s, or nothing when s is "" (omitempty).
func appendText(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, key...), s)
}

// appendCount appends key and n, or nothing when n is 0 (omitempty).
func appendCount(b []byte, key string, n int) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), int64(n), 10)
}

// appendStrings appends ss as a JSON array of strings, null when nil.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendString appends s as a JSON string as the api's encoder writes it
// (json.Encoder with SetEscapeHTML(false)).
func appendString(b []byte, s string) []byte { return jsonstr.Append(b, s, false) }
