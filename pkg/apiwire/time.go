package apiwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// TimeLayout is how the api writes times: RFC 3339 in UTC with
// milliseconds, e.g. "2026-01-02T03:04:05.006Z".
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Time is a timestamp of the api's documents. It marshals as TimeLayout
// text in UTC, and the zero time as "" (fields that the api leaves out
// when unset are tagged omitzero, which uses IsZero). It unmarshals from
// RFC 3339 text, "" or null (both the zero time).
type Time struct{ time.Time }

// At wraps t.
func At(t time.Time) Time { return Time{t} }

// UnixMilli is the time of Unix milliseconds ms; ms <= 0 (unset in the
// stored records) gives the zero time.
func UnixMilli(ms int64) Time {
	if ms <= 0 {
		return Time{}
	}
	return Time{time.UnixMilli(ms)}
}

// String returns t as the api writes it, or "" for the zero time.
func (t Time) String() string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(TimeLayout)
}

// MarshalJSON writes t as a JSON string: TimeLayout in UTC, "" when zero.
func (t Time) MarshalJSON() ([]byte, error) {
	return t.appendJSON(make([]byte, 0, len(TimeLayout)+2)), nil
}

// appendJSON appends what MarshalJSON returns; Run.AppendJSON shares it so
// the two cannot format a time differently.
func (t Time) appendJSON(b []byte) []byte {
	if t.IsZero() {
		return append(b, `""`...)
	}
	return append(appendLayout(append(b, '"'), t.UTC()), '"')
}

// appendLayout appends u, a UTC time, as u.AppendFormat(b, TimeLayout)
// does. Years 0 to 9999 are written digit by digit: AppendFormat, which
// interprets the layout on every call, took three quarters of the time
// Run.AppendJSON spent on a large run, whose every node has three times.
func appendLayout(b []byte, u time.Time) []byte {
	year, month, day := u.Date()
	if year < 0 || year > 9999 {
		return u.AppendFormat(b, TimeLayout)
	}
	hour, minute, sec := u.Clock()
	b = appendDigits(b, year, 4)
	b = appendDigits(append(b, '-'), int(month), 2)
	b = appendDigits(append(b, '-'), day, 2)
	b = appendDigits(append(b, 'T'), hour, 2)
	b = appendDigits(append(b, ':'), minute, 2)
	b = appendDigits(append(b, ':'), sec, 2)
	b = appendDigits(append(b, '.'), u.Nanosecond()/1e6, 3)
	return append(b, 'Z')
}

// appendDigits appends the width lowest decimal digits of v >= 0,
// zero-padded.
func appendDigits(b []byte, v, width int) []byte {
	b = append(b, "0000"[:width]...)
	for i := len(b) - 1; v > 0 && i >= len(b)-width; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

// UnmarshalJSON reads RFC 3339 text; "" and null are the zero time.
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("time %s: want RFC 3339 text", b)
	}
	if s == "" {
		t.Time = time.Time{}
		return nil
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("time %q: %w", s, err)
	}
	t.Time = v
	return nil
}
