//go:build !failpoints

package failpoint

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNoFailpointWithoutTheTag(t *testing.T) {
	t.Setenv(EnvExitAfterResult, "charge")
	require.False(t, Enabled)
	ExitAfterResult(slog.New(slog.NewTextHandler(io.Discard, nil)), "run-a", "charge") // the test goes on
}
