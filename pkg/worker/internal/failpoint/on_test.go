//go:build failpoints

package failpoint

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExitAfterResultKillsOnlyForItsNode(t *testing.T) {
	require.True(t, Enabled)
	killed := 0
	defer func(k func()) { kill = k }(kill)
	kill = func() { killed++ }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Setenv(EnvExitAfterResult, "")
	ExitAfterResult(log, "run-a", "charge")
	require.Zero(t, killed, "off without its variable")
	t.Setenv(EnvExitAfterResult, "charge")
	ExitAfterResult(log, "run-a", "ship")
	require.Zero(t, killed, "another node")
	ExitAfterResult(log, "run-a", "charge")
	require.Equal(t, 1, killed)
}
