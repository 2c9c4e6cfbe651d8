package devstack

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetentionLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, "ended runs are deleted 7d after they end (BRAID_RUN_RETENTION; 0 keeps them)", retentionLine(0))
	require.Equal(t, "ended runs are deleted 30d after they end (BRAID_RUN_RETENTION; 0 keeps them)", retentionLine(30*24*time.Hour))
	require.Equal(t, "ended runs are deleted 36h0m0s after they end (BRAID_RUN_RETENTION; 0 keeps them)", retentionLine(36*time.Hour))
	require.Equal(t, "ended runs are kept for ever (BRAID_RUN_RETENTION=0)", retentionLine(-1))
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	require.Equal(t, ".braid/redis-password", shellQuote(".braid/redis-password"))
	require.Equal(t, "'/tmp/my data/redis-password'", shellQuote("/tmp/my data/redis-password"))
	require.Equal(t, `'/tmp/it'\''s/x'`, shellQuote("/tmp/it's/x"))
	require.Equal(t, "''", shellQuote(""))
	for _, p := range []string{"/tmp/my data/x", "/tmp/it's/x", "/tmp/$(id)/x", "/tmp/a\"b/x"} {
		out, err := exec.Command("sh", "-c", "printf %s "+shellQuote(p)).Output()
		require.NoError(t, err)
		require.Equal(t, p, string(out), "the shell reads back the path")
	}
}
