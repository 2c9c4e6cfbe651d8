package worker

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/stretchr/testify/require"
)

// TestAttemptOutcome: the outcome label follows conclude's reading of the
// attempt's context and error.
func TestAttemptOutcome(t *testing.T) {
	t.Parallel()
	cancelled := func(cause error) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		return ctx
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"succeeded", context.Background(), nil, "succeeded"},
		{"failed", context.Background(), errors.New("boom"), "failed"},
		{"timed out", context.Background(), fmt.Errorf("%w after 1s: %w", errTimedOut, context.DeadlineExceeded), "timed_out"},
		{"stopped", cancelled(stopError{reason: statestore.ClaimStale}), context.Canceled, "stopped"},
		{"handed back", cancelled(errShutdown), context.Canceled, "handed_back"},
		{"finished during shutdown", cancelled(errShutdown), nil, "succeeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, outcomeNames[attemptOutcome(tc.ctx, tc.err)])
		})
	}
}
