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
	require.Zero(t, s.ReconcileAllEvery, "unset: orchsvc derives it from ReconcileEvery")
	require.Equal(t, 1000, s.ReconcileRate)
	require.Equal(t, "ns:", s.Keys.Namespace)
	require.Equal(t, 7*time.Second, s.DrainTimeout)
	require.Equal(t, 7*24*time.Hour, s.RunRetention)

	for v, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "36h": 36 * time.Hour, "0": -1, "off": -1, "1s": time.Second} {
		t.Setenv("BRAID_RUN_RETENTION", v)
		c, err := Load()
		require.NoError(t, err, v)
		require.Equal(t, want, c.Service(nil, nil).RunRetention, v)
	}
	for _, v := range []string{"500ms", "-1h", "2d3h", "0d", "week"} {
		t.Setenv("BRAID_RUN_RETENTION", v)
		_, err := Load()
		require.ErrorContains(t, err, "BRAID_RUN_RETENTION", v)
	}
	t.Setenv("BRAID_RUN_RETENTION", "")
	t.Setenv("BRAID_RECONCILE_ALL_EVERY", "2m")
	c, err = Load()
	require.NoError(t, err)
	require.Equal(t, 2*time.Minute, c.Service(nil, nil).ReconcileAllEvery)
	t.Setenv("BRAID_RECONCILE_ALL_EVERY", "")

	t.Setenv("BRAID_LOCK_TTL", "forever")
	t.Setenv("BRAID_KAFKA_PARTITIONS", "0")
	t.Setenv("BRAID_RECONCILE_RATE", "0")
	_, err = Load()
	require.ErrorContains(t, err, "BRAID_RECONCILE_RATE")
	require.ErrorContains(t, err, "BRAID_LOCK_TTL")
	require.ErrorContains(t, err, "BRAID_KAFKA_PARTITIONS")
}
