package confcheck

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestChecks(t *testing.T) {
	t.Parallel()
	require.NoError(t, Required("Redis client", false))
	require.EqualError(t, Required("Redis client", true), "Redis client is required")
	require.NoError(t, Positive("Concurrency", 1))
	require.EqualError(t, Positive("Concurrency", 0), "Concurrency must be positive, got 0")
	require.EqualError(t, Positive("MaxBodyBytes", int64(-1)), "MaxBodyBytes must be positive, got -1")
	require.EqualError(t, Positive("DrainTimeout", -time.Second), "DrainTimeout must be positive, got -1s")
}
