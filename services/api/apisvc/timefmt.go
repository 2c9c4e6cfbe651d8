package apisvc

import (
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/apiwire"
)

// formatMs formats Unix milliseconds; 0 gives "".
func formatMs(ms int64) string { return apiwire.UnixMilli(ms).String() }

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
