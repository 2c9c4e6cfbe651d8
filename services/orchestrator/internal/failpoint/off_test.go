//go:build !failpoints

package failpoint

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNoFailpointWithoutTheTag(t *testing.T) {
	t.Setenv(EnvHoldWrite, "first")
	require.False(t, Enabled)
	require.False(t, HoldWrite(slog.New(slog.NewTextHandler(io.Discard, nil)), "run-a"))
	t.Setenv(EnvExitAfterWrite, "charge")
	ExitAfterWrite(slog.New(slog.NewTextHandler(io.Discard, nil)), "run-a", "charge") // the test goes on
}
