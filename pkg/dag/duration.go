package dag

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Duration is a time.Duration that reads and writes JSON as a Go duration string ("1h30m",
// "500ms", "2s"). On input it also accepts a JSON number of seconds (2, 0.5), "" and null (zero).
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String returns the compact string form: "1h30m", "2m", "500ms", "0s".
func (d Duration) String() string {
	s := time.Duration(d).String()
	if strings.HasSuffix(s, "m0s") || strings.HasSuffix(s, "h0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// MarshalJSON implements json.Marshaler with the String form.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// UnmarshalJSON implements json.Unmarshaler; see Duration for the accepted forms.
func (d *Duration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := ParseDuration(s)
		*d = v
		return err
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return errors.New(`a duration must be a string such as "1m30s" or a number of seconds`)
	}
	v, err := durationFromSeconds(secs)
	*d = v
	return err
}

// ParseDuration parses a Go duration string; "" is zero.
func ParseDuration(s string) (Duration, error) {
	if s == "" {
		return 0, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (want a form such as \"1h30m\", \"500ms\" or \"2s\")", s)
	}
	return Duration(v), nil
}

// durationFromSeconds converts a number of seconds, rejecting values a Duration cannot hold.
func durationFromSeconds(secs float64) (Duration, error) {
	ns := secs * float64(time.Second)
	if math.IsNaN(ns) || ns >= math.MaxInt64 || ns <= math.MinInt64 {
		return 0, fmt.Errorf("duration of %g seconds is out of range", secs)
	}
	return Duration(math.Round(ns)), nil
}
