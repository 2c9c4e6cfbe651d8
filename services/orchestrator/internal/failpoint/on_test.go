//go:build failpoints

package failpoint

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHoldWriteHoldsOnceForItsRun(t *testing.T) {
	for _, tc := range []struct{ name, env, other, run string }{
		{name: "named run", env: "run-a", other: "run-b", run: "run-a"},
		{name: "first", env: "first", other: "", run: "run-c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvHoldWrite, tc.env)
			held.Store(false)
			defer func(d time.Duration) { maxHold = d }(maxHold)
			maxHold = 300 * time.Millisecond // nobody stops this process: released at maxHold
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			if tc.other != "" {
				require.False(t, HoldWrite(log, tc.other), "a write of another run")
			}
			require.True(t, HoldWrite(log, tc.run))
			require.False(t, HoldWrite(log, tc.run), "held once per process")
		})
	}
}

func TestHoldWriteOffWithoutItsVariable(t *testing.T) {
	t.Setenv(EnvHoldWrite, "")
	held.Store(false)
	require.True(t, Enabled)
	require.False(t, HoldWrite(slog.New(slog.NewTextHandler(io.Discard, nil)), "run-a"))
}

func TestExitAfterWriteKillsOnlyForItsNode(t *testing.T) {
	killed := 0
	defer func(k func()) { kill = k }(kill)
	kill = func() { killed++ }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Setenv(EnvExitAfterWrite, "")
	ExitAfterWrite(log, "run-a", "charge")
	require.Zero(t, killed, "off without its variable")
	t.Setenv(EnvExitAfterWrite, "charge")
	ExitAfterWrite(log, "run-a", "ship")
	require.Zero(t, killed, "another node")
	ExitAfterWrite(log, "run-a", "charge")
	require.Equal(t, 1, killed)
}
