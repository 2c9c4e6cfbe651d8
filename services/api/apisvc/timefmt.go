package apisvc

import (
	"strconv"
	"time"
)

// timeLayout is how the api writes times: RFC 3339 in UTC with milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// formatTime returns t in timeLayout, or "" for the zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

// formatMs formats Unix milliseconds; 0 gives "".
func formatMs(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return formatTime(time.UnixMilli(ms))
}

// parseMs parses a Unix-milliseconds field; empty or malformed gives 0.
func parseMs(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// durationMs returns finished-started (or now-started while running) in
// ms, or nil when the span has not begun.
func durationMs(started, finished int64, now time.Time) *int64 {
	if started <= 0 {
		return nil
	}
	end := finished
	if end <= 0 {
		end = now.UnixMilli()
	}
	d := max(end-started, 0)
	return &d
}
