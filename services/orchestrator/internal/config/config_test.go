package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Not parallel: t.Setenv changes the process environment.
func TestLoad(t *testing.T) {
	t.Setenv("BRAID_KAFKA_BROKERS", "k1:9092,k2:9092")
	t.Setenv("BRAID_LOCK_TTL", "3s")
	t.Setenv("BRAID_REDIS_NAMESPACE", "ns:")
	t.Setenv("BRAID_ORCHESTRATOR_DRAIN_TIMEOUT", "7s")
	c, err := Load()
	require.NoError(t, err)
	s := c.Service(nil, nil)
	require.Equal(t, []string{"k1:9092", "k2:9092"}, s.Bus.Brokers)
	require.Equal(t, 3*time.Second, s.LockTTL)
	require.Equal(t, 5*time.Second, s.ReconcileEvery)
	require.Equal(t, 1000, s.ReconcileRate)
	require.Equal(t, "ns:", s.Keys.Namespace)
	require.Equal(t, 7*time.Second, s.DrainTimeout)

	t.Setenv("BRAID_LOCK_TTL", "forever")
	t.Setenv("BRAID_KAFKA_PARTITIONS", "0")
	t.Setenv("BRAID_RECONCILE_RATE", "0")
	_, err = Load()
	require.ErrorContains(t, err, "BRAID_RECONCILE_RATE")
	require.ErrorContains(t, err, "BRAID_LOCK_TTL")
	require.ErrorContains(t, err, "BRAID_KAFKA_PARTITIONS")
}
