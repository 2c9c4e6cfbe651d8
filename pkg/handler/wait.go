package handler

import (
	"context"
	"errors"
	"fmt"
	"time"
)

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
