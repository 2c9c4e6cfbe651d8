package clock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSleep(t *testing.T) {
	t.Parallel()
	require.NoError(t, Sleep(context.Background(), time.Microsecond), "an elapsed pause is not an error")
	require.NoError(t, Sleep(context.Background(), 0), "a zero pause on a live context is not an error")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, Sleep(ctx, time.Hour), context.Canceled, "an ended context cuts the pause short")
	require.ErrorIs(t, Sleep(ctx, 0), context.Canceled)

	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	require.ErrorIs(t, Sleep(ctx, time.Hour), context.DeadlineExceeded)
}
