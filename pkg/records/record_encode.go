package records

import (
	"math/bits"
	"strconv"

	"github.com/braidhq/braid/pkg/jsonstr"
)

// Member lengths that sizeHint adds up: an omitempty member costs its key
// and value only when set.
const (
	// intKeyLen is the longest key of an int member with its comma and
	// colon: `,"ra":`.
	intKeyLen = len(`,"ra":`)
	// stringMemberLen is a one-letter key with its comma, colon and quotes.
	stringMemberLen = len(`,"w":""`)
	// trueMemberLen is the longest true bool member: `,"fo":true`.
	trueMemberLen = len(`,"fo":true`)
)

// appendRecord appends r as the JSON object json.Marshal writes for it:
// fields in declaration order with the embedded FanOutCounts inlined last,
// and every field but the state omitted when zero.
func (r *NodeRecord) appendRecord(b []byte) []byte {
	b = append(b, `{"s":`...)
	b = appendJSONString(b, string(r.State))
	b = appendIntField(b, `,"a":`, int64(r.Attempt))
	b = appendIntField(b, `,"p":`, int64(r.ParentsLeft))
	b = appendIntField(b, `,"q":`, r.QueuedAt)
	b = appendIntField(b, `,"t":`, r.StartedAt)
	b = appendIntField(b, `,"f":`, r.FinishedAt)
	b = appendStringField(b, `,"w":`, r.Worker)
	b = appendStringField(b, `,"e":`, r.Error)
	b = appendStringField(b, `,"r":`, r.Reason)
	b = appendTrueField(b, `,"u":true`, r.UpstreamFailed)
	b = appendTrueField(b, `,"k":true`, r.WhenSkipped)
	b = appendIntField(b, `,"ra":`, r.RetryAt)
	b = appendIntField(b, `,"d":`, r.Deadline)
	b = appendIntField(b, `,"wk":`, r.WakeAt)
	b = appendIntField(b, `,"l":`, int64(r.Lost))
	b = appendIntField(b, `,"ab":`, int64(r.AttemptBase))
	b = appendPast(b, r.Past)
	b = r.FanOutCounts.appendFields(b)
	return append(b, '}')
}

// appendFields appends c's fields as members of an enclosing object that
// already has a member, the way encoding/json inlines an embedded struct.
func (c *FanOutCounts) appendFields(b []byte) []byte {
	b = appendTrueField(b, `,"fo":true`, c.FanOut)
	b = appendIntField(b, `,"n":`, int64(c.Count))
	b = appendIntField(b, `,"nx":`, int64(c.Next))
	b = appendIntField(b, `,"na":`, int64(c.Active))
	b = appendIntField(b, `,"ns":`, int64(c.Succeeded))
	b = appendIntField(b, `,"nf":`, int64(c.Failed))
	b = appendIntField(b, `,"nc":`, int64(c.Cancelled))
	b = appendIntField(b, `,"ib":`, int64(c.InstanceBase))
	return appendIntField(b, `,"ih":`, int64(c.InstanceHigh))
}

// appendPast appends the "h" member holding past, omitted when empty.
func appendPast(b []byte, past []PastAttempt) []byte {
	if len(past) == 0 {
		return b
	}
	b = append(b, `,"h":[`...)
	for i := range past {
		if i > 0 {
			b = append(b, ',')
		}
		b = past[i].appendAttempt(b)
	}
	return append(b, ']')
}

// appendAttempt appends p as the JSON object json.Marshal writes for it;
// the attempt and the outcome are written even when zero.
func (p *PastAttempt) appendAttempt(b []byte) []byte {
	b = append(b, `{"a":`...)
	b = strconv.AppendInt(b, int64(p.Attempt), 10)
	b = append(b, `,"o":`...)
	b = appendJSONString(b, string(p.Outcome))
	b = appendStringField(b, `,"w":`, p.Worker)
	b = appendIntField(b, `,"q":`, p.QueuedAt)
	b = appendIntField(b, `,"t":`, p.StartedAt)
	b = appendIntField(b, `,"f":`, p.EndedAt)
	b = appendStringField(b, `,"e":`, p.Error)
	b = appendStringField(b, `,"s":`, string(p.State))
	return append(b, '}')
}

// appendIntField appends key (which carries its comma and colon) and v,
// or nothing when v is zero (omitempty).
func appendIntField(b []byte, key string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), v, 10)
}

// appendStringField appends key and s as a JSON string, or nothing when s
// is empty (omitempty).
func appendStringField(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, key...), s)
}

// appendTrueField appends member (a key with the value true) when set;
// an omitempty bool is never written as false.
func appendTrueField(b []byte, member string, set bool) []byte {
	if !set {
		return b
	}
	return append(b, member...)
}

// appendJSONString appends s quoted exactly as encoding/json's Marshal
// quotes a string (with HTML escaping).
func appendJSONString(b []byte, s string) []byte { return jsonstr.Append(b, s, true) }

// sizeHint is an upper bound on len(r.Encode()) unless a string needs
// escaping, so that Encode allocates once and little more than it needs.
func (r *NodeRecord) sizeHint() int {
	n := len(`{"s":""}`) + len(r.State) + stringsLen(r.Worker, r.Error, r.Reason) +
		trueMemberLen*trueCount(r.UpstreamFailed, r.WhenSkipped, r.FanOut)
	n += intsLen(int64(r.Attempt), int64(r.ParentsLeft), r.QueuedAt, r.StartedAt,
		r.FinishedAt, r.RetryAt, r.Deadline, r.WakeAt, int64(r.Lost), int64(r.AttemptBase),
		int64(r.Count), int64(r.Next), int64(r.Active), int64(r.Succeeded), int64(r.Failed), int64(r.Cancelled),
		int64(r.InstanceBase), int64(r.InstanceHigh))
	if len(r.Past) > 0 {
		n += len(`,"h":[]`)
		for i := range r.Past {
			n += r.Past[i].sizeHint()
		}
	}
	return n
}

// sizeHint is an upper bound on the length of p's JSON object, with its
// separating comma, unless a string needs escaping.
func (p *PastAttempt) sizeHint() int {
	return len(`,{"a":,"o":""}`) + maxIntLen(int64(p.Attempt)) + len(p.Outcome) +
		stringsLen(p.Worker, p.Error, string(p.State)) + intsLen(p.QueuedAt, p.StartedAt, p.EndedAt)
}

// stringsLen bounds the length of the omitempty string members holding ss
// when none needs escaping.
func stringsLen(ss ...string) int {
	n := 0
	for _, s := range ss {
		if s != "" {
			n += stringMemberLen + len(s)
		}
	}
	return n
}

// trueCount counts the set bools, each an omitempty member written as true.
func trueCount(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// intsLen bounds the length of the omitempty int members holding vs.
func intsLen(vs ...int64) int {
	n := 0
	for _, v := range vs {
		if v != 0 {
			n += intKeyLen + maxIntLen(v)
		}
	}
	return n
}

// maxIntLen bounds the length of v in decimal, sign included, from its bit
// length: a number below 2^k has at most floor(k*log10(2))+1 digits, and
// 1233/4096 is log10(2) close enough to give that floor for every k <= 64.
func maxIntLen(v int64) int {
	u, sign := uint64(v), 0
	if v < 0 {
		u, sign = -u, 1
	}
	return sign + bits.Len64(u)*1233>>12 + 1
}
