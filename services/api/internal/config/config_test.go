package config

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadDefaults(t *testing.T) {
	for _, v := range []string{"BRAID_API_ADDR", "BRAID_API_KEYS", "BRAID_AUTH", "BRAID_KAFKA_BROKERS", "BRAID_API_MAX_BODY", "BRAID_API_MAX_WAITERS", "BRAID_API_RATE_LIMIT", "BRAID_API_RATE_BURST",
		"BRAID_API_MAX_STREAMS_PER_KEY", "BRAID_API_MAX_WAITERS_PER_KEY", "BRAID_LOG_LEVEL", "BRAID_KAFKA_PARTITIONS"} {
		t.Setenv(v, "")
	}
	c, err := Load()
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8080", c.Addr)
	require.Equal(t, []string{"127.0.0.1:19092"}, c.KafkaBrokers)
	require.Equal(t, int64(DefaultMaxBody), c.MaxBody)
	require.Equal(t, DefaultMaxWaiters, c.MaxWaiters)
	require.Equal(t, DefaultRateLimit, c.RateLimit)
	require.Zero(t, c.RateBurst, "0: twice the rate, decided by apisvc")
	require.Equal(t, DefaultMaxStreamsPerKey, c.MaxStreamsPerKey)
	require.Equal(t, DefaultMaxWaitersPerKey, c.MaxWaitersPerKey)
	require.False(t, c.AuthOff)
	require.Equal(t, slog.LevelInfo, c.LogLevel)
}

func TestLoadValues(t *testing.T) {
	t.Setenv("BRAID_API_ADDR", ":9999")
	t.Setenv("BRAID_AUTH", "off")
	t.Setenv("BRAID_KAFKA_BROKERS", "a:1, b:2,")
	t.Setenv("BRAID_API_MAX_BODY", "1024")
	t.Setenv("BRAID_API_MAX_WAITERS", "7")
	t.Setenv("BRAID_API_RATE_LIMIT", "0")
	t.Setenv("BRAID_API_RATE_BURST", "30")
	t.Setenv("BRAID_API_MAX_STREAMS_PER_KEY", "3")
	t.Setenv("BRAID_API_MAX_WAITERS_PER_KEY", "0")
	t.Setenv("BRAID_LOG_LEVEL", "debug")
	t.Setenv("BRAID_API_KEYS", "ci:secret:write")
	c, err := Load()
	require.NoError(t, err)
	require.Equal(t, ":9999", c.Addr)
	require.True(t, c.AuthOff)
	require.Equal(t, []string{"a:1", "b:2"}, c.KafkaBrokers)
	require.Equal(t, int64(1024), c.MaxBody)
	require.Equal(t, 7, c.MaxWaiters)
	require.Zero(t, c.RateLimit, "0 turns rate limiting off")
	require.Equal(t, 30, c.RateBurst)
	require.Equal(t, 3, c.MaxStreamsPerKey)
	require.Zero(t, c.MaxWaitersPerKey)
	require.Equal(t, slog.LevelDebug, c.LogLevel)
	require.Equal(t, "ci:secret:write", c.APIKeys)
}

func TestLoadReportsEveryError(t *testing.T) {
	t.Setenv("BRAID_AUTH", "maybe")
	t.Setenv("BRAID_API_MAX_BODY", "-1")
	t.Setenv("BRAID_LOG_LEVEL", "loud")
	t.Setenv("BRAID_KAFKA_PARTITIONS", "x")
	t.Setenv("BRAID_API_RATE_LIMIT", "-5")
	t.Setenv("BRAID_API_MAX_STREAMS_PER_KEY", "many")
	_, err := Load()
	require.Error(t, err)
	for _, want := range []string{"BRAID_AUTH", "BRAID_API_MAX_BODY", "BRAID_LOG_LEVEL", "BRAID_KAFKA_PARTITIONS", "BRAID_API_RATE_LIMIT", "BRAID_API_MAX_STREAMS_PER_KEY"} {
		require.Contains(t, err.Error(), want)
	}
}
