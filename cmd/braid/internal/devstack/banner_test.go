package devstack

import (
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
