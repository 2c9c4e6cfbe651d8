// Package clock holds Braid's one context-aware pause, so every retry loop,
// poll and simulated task stops waiting the moment its context ends and
// reports it the same way.
package clock

import (
	"context"
	"time"
)

// Sleep pauses for d or until ctx ends, whichever comes first. It returns nil
// when d has elapsed and ctx.Err() when ctx ended first; a d of zero or less
// does not wait and returns ctx.Err(). The timer is stopped on return, so a
// long d cut short by ctx leaves nothing behind.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
