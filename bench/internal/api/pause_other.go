//go:build !linux

package api

import "time"

// shortPause sleeps for d; outside Linux it may round up to the runtime's
// timer granularity.
func shortPause(d time.Duration) { time.Sleep(d) }
