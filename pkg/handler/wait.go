package handler

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// sleepCtx waits for d or until ctx is done, whichever comes first.
func sleepCtx(ctx context.Context, d time.Duration) error {
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

// ctxError describes why ctx ended: "op: timed out after X" for a deadline,
// "op: cancelled after X" otherwise. It wraps ctx.Err().
func ctxError(ctx context.Context, op string, start time.Time) error {
	elapsed := time.Since(start).Round(time.Millisecond)
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: timed out after %s: %w", op, elapsed, err)
	}
	return fmt.Errorf("%s: cancelled after %s: %w", op, elapsed, err)
}
