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
	if t.IsZero() {
		return []byte(`""`), nil
	}
	b := make([]byte, 0, len(TimeLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, TimeLayout)
	return append(b, '"'), nil
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
