package records

import (
	"math"
	"unicode/utf8"
)

// maxInt64Digits is the number of decimal digits of the largest int64
// magnitude; a longer integer literal cannot fit.
const maxInt64Digits = 19

// decodeFast parses b when it lies in the subset of JSON that Encode writes
// without Past: one object whose keys are NodeRecord's exact short keys,
// each at most once, with integers, booleans and strings free of escapes.
// Inside that subset its result is the one json.Unmarshal gives; ok is
// false for anything else (including every input json.Unmarshal rejects),
// and the caller must then use json.Unmarshal, whose key folding, escapes,
// nulls, duplicate keys and error reporting it does not reproduce.
func decodeFast[T text](b T) (r NodeRecord, ok bool) {
	d := fastDecoder[T]{b: b}
	if !d.consume('{') {
		return r, false
	}
	if d.consume('}') {
		return r, d.atEnd()
	}
	var seen uint32
	for {
		key, ok := d.str()
		if !ok || !d.consume(':') {
			return r, false
		}
		bit, ok := d.field(&r, key)
		if !ok || seen&bit != 0 {
			return r, false
		}
		seen |= bit
		if d.consume('}') {
			return r, d.atEnd()
		}
		if !d.consume(',') {
			return r, false
		}
	}
}

// text is what decodeFast reads: a stored record as bytes, or as the
// string a Redis reply holds (then the record's strings share its memory,
// and nothing is copied to decode it).
type text interface{ string | []byte }

// fastDecoder is decodeFast's cursor over its input. Every method skips
// the whitespace before its token and reports false when the token is not
// in the subset, leaving the cursor somewhere undefined.
type fastDecoder[T text] struct {
	b T
	i int
}

// field parses the value of key into its field of r. It returns the
// field's bit, which tells duplicate keys apart, and false for a key that
// is not one of NodeRecord's exact keys (so "h" for Past, too).
func (d *fastDecoder[T]) field(r *NodeRecord, key T) (uint32, bool) {
	switch string(key) {
	case "s":
		return 1 << 0, d.state(&r.State)
	case "a":
		return 1 << 1, d.int(&r.Attempt)
	case "p":
		return 1 << 2, d.int(&r.ParentsLeft)
	case "q":
		return 1 << 3, d.int64(&r.QueuedAt)
	case "t":
		return 1 << 4, d.int64(&r.StartedAt)
	case "f":
		return 1 << 5, d.int64(&r.FinishedAt)
	case "w":
		return 1 << 6, d.text(&r.Worker)
	case "e":
		return 1 << 7, d.text(&r.Error)
	case "r":
		return 1 << 8, d.text(&r.Reason)
	case "u":
		return 1 << 9, d.bool(&r.UpstreamFailed)
	case "k":
		return 1 << 10, d.bool(&r.WhenSkipped)
	case "ra":
		return 1 << 11, d.int64(&r.RetryAt)
	case "d":
		return 1 << 12, d.int64(&r.Deadline)
	case "wk":
		return 1 << 13, d.int64(&r.WakeAt)
	case "l":
		return 1 << 14, d.int(&r.Lost)
	case "fo":
		return 1 << 15, d.bool(&r.FanOut)
	case "n":
		return 1 << 16, d.int(&r.Count)
	case "nx":
		return 1 << 17, d.int(&r.Next)
	case "na":
		return 1 << 18, d.int(&r.Active)
	case "ns":
		return 1 << 19, d.int(&r.Succeeded)
	case "nf":
		return 1 << 20, d.int(&r.Failed)
	case "nc":
		return 1 << 21, d.int(&r.Cancelled)
	case "ab":
		return 1 << 22, d.int(&r.AttemptBase)
	case "ib":
		return 1 << 23, d.int(&r.InstanceBase)
	case "ih":
		return 1 << 24, d.int(&r.InstanceHigh)
	}
	return 0, false
}

// skipSpace moves past JSON whitespace.
func (d *fastDecoder[T]) skipSpace() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// consume moves past c, reporting whether it came next.
func (d *fastDecoder[T]) consume(c byte) bool {
	d.skipSpace()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// atEnd reports whether only whitespace is left.
func (d *fastDecoder[T]) atEnd() bool {
	d.skipSpace()
	return d.i == len(d.b)
}

// str returns the contents of a string literal without escapes or control
// characters, in valid UTF-8: exactly the bytes json.Unmarshal would store.
// The result aliases the input.
func (d *fastDecoder[T]) str() (T, bool) {
	var none T
	if !d.consume('"') {
		return none, false
	}
	start, ascii := d.i, true
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, ascii || isUTF8(s)
		case c == '\\' || c < ' ':
			return none, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return none, false
}

// isUTF8 is utf8.Valid or utf8.ValidString, as s is.
func isUTF8[T text](s T) bool {
	switch v := any(s).(type) {
	case string:
		return utf8.ValidString(v)
	case []byte:
		return utf8.Valid(v)
	}
	return false
}

// text parses a string into p (for a string input, a substring of it).
func (d *fastDecoder[T]) text(p *string) bool {
	s, ok := d.str()
	*p = string(s)
	return ok
}

// state parses a string into p, sharing the constant's storage for the
// known states so that the common record decodes without allocating for it.
func (d *fastDecoder[T]) state(p *NodeState) bool {
	s, ok := d.str()
	*p = internState(s)
	return ok
}

// bool parses true or false into p.
func (d *fastDecoder[T]) bool(p *bool) bool {
	d.skipSpace()
	rest := d.b[d.i:]
	switch {
	case hasPrefix(rest, "true"):
		*p, d.i = true, d.i+len("true")
	case hasPrefix(rest, "false"):
		*p, d.i = false, d.i+len("false")
	default:
		return false
	}
	return true
}

// int parses an integer that fits an int into p.
func (d *fastDecoder[T]) int(p *int) bool {
	v, ok := d.integer(math.MinInt, math.MaxInt)
	*p = int(v)
	return ok
}

// int64 parses an integer into p.
func (d *fastDecoder[T]) int64(p *int64) bool {
	v, ok := d.integer(math.MinInt64, math.MaxInt64)
	*p = v
	return ok
}

// integer parses a JSON number without fraction or exponent, which
// json.Unmarshal stores in an integer field when it lies in [lo, hi].
// It reads at most maxInt64Digits digits, so the magnitude cannot overflow
// a uint64, and rejects a leading zero. Whatever follows the digits must be
// a delimiter for the literal to be a whole integer; the caller's next
// consume checks that, so "1.5", "1e3" and a twenty-digit number fail there.
func (d *fastDecoder[T]) integer(lo, hi int64) (int64, bool) {
	d.skipSpace()
	neg := d.i < len(d.b) && d.b[d.i] == '-'
	if neg {
		d.i++
	}
	digits := d.b[d.i:min(len(d.b), d.i+maxInt64Digits)]
	var u uint64
	for i := range len(digits) {
		c := digits[i]
		if c < '0' || c > '9' {
			digits = digits[:i]
			break
		}
		u = u*10 + uint64(c-'0')
	}
	d.i += len(digits)
	if len(digits) == 0 || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	v, ok := signed(u, neg)
	return v, ok && lo <= v && v <= hi
}

// signed returns the int64 of magnitude u and sign neg, and false when it
// does not fit.
func signed(u uint64, neg bool) (int64, bool) {
	if neg {
		return int64(-u), u <= 1<<63
	}
	return int64(u), u <= math.MaxInt64
}

// hasPrefix reports whether s begins with p.
func hasPrefix[T text](s T, p string) bool {
	return len(s) >= len(p) && string(s[:len(p)]) == p
}

// internState returns the NodeState spelled s, without allocating when it
// is one of the declared states.
func internState[T text](s T) NodeState {
	switch string(s) {
	case string(NodePending):
		return NodePending
	case string(NodeQueued):
		return NodeQueued
	case string(NodeRunning):
		return NodeRunning
	case string(NodeSucceeded):
		return NodeSucceeded
	case string(NodeFailed):
		return NodeFailed
	case string(NodeRetryWait):
		return NodeRetryWait
	case string(NodeSkipped):
		return NodeSkipped
	case string(NodeCancelled):
		return NodeCancelled
	}
	return NodeState(s)
}
