package envconf

import (
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDefaults(t *testing.T) {
	t.Parallel()
	r := FromMap(nil)
	c := r.Common()
	require.NoError(t, r.Err())
	require.Equal(t, Common{KafkaBrokers: []string{"127.0.0.1:19092"}, Partitions: 6,
		SessionTimeout: 3 * time.Second, RedisURL: "redis://127.0.0.1:16379/0", LogLevel: slog.LevelInfo, IndexShards: 1}, c)
	require.Equal(t, 4, r.PositiveInt("X", 4))
	require.Equal(t, 5, r.NonNegativeInt("X", 5))
	require.Equal(t, time.Second, r.Duration("X", time.Second))
	require.True(t, r.Bool("X", true))
}

func TestIndexShards(t *testing.T) {
	t.Parallel()
	cluster := "redis-cluster://:pw@h1:7000,h2:7000"
	require.Equal(t, 16, FromMap(map[string]string{"BRAID_REDIS_URL": cluster}).Common().IndexShards, "a cluster's default")
	r := FromMap(map[string]string{"BRAID_REDIS_URL": cluster, "BRAID_REDIS_INDEX_SHARDS": "4"})
	c := r.Common()
	require.NoError(t, r.Err())
	require.Equal(t, statestore.Keys{Shards: 4}, c.Keys())
	r = FromMap(map[string]string{"BRAID_REDIS_INDEX_SHARDS": "257"})
	r.Common()
	require.ErrorContains(t, r.Err(), "BRAID_REDIS_INDEX_SHARDS")
}

func TestValues(t *testing.T) {
	t.Parallel()
	r := FromMap(map[string]string{"BRAID_KAFKA_BROKERS": " a:1, ,b:2 ", "N": "8", "Z": "0", "D": "250ms", "B": "off", "BRAID_LOG_LEVEL": "debug",
		"BRAID_PPROF_ADDR": "127.0.0.1:6060", "BRAID_KAFKA_SESSION_TIMEOUT": "10s", "BRAID_KAFKA_TOPIC_PREFIX": "p.",
		"BRAID_KAFKA_REPLICATION_FACTOR": "2"})
	c := r.Common()
	require.Equal(t, eventbus.Config{Brokers: []string{"a:1", "b:2"}, ClientID: "svc", Partitions: 6, ReplicationFactor: 2, TopicPrefix: "p.",
		SessionTimeout: 10 * time.Second}, c.Bus("svc"))
	require.Equal(t, []string{"a:1", "b:2"}, c.KafkaBrokers)
	require.Equal(t, "127.0.0.1:6060", c.PprofAddr)
	require.Equal(t, 8, r.PositiveInt("N", 1))
	require.Equal(t, 8, r.NonNegativeInt("N", 1))
	require.Equal(t, 0, r.NonNegativeInt("Z", 1))
	require.Equal(t, 250*time.Millisecond, r.Duration("D", time.Second))
	require.False(t, r.Bool("B", true))
	require.Equal(t, 8, Parsed(r, "N", strconv.Atoi))
	require.Zero(t, Parsed(r, "UNSET", strconv.Atoi))
	require.Equal(t, slog.LevelDebug, r.LogLevel("BRAID_LOG_LEVEL"))
	require.NoError(t, r.Err())
}

func TestEveryProblemIsReported(t *testing.T) {
	t.Parallel()
	r := FromMap(map[string]string{"N": "-1", "M": "-2", "F": "1.5", "D": "soon", "B": "maybe", "BRAID_LOG_LEVEL": "loud", "P": "x",
		"BRAID_KAFKA_REPLICATION_FACTOR": "0"})
	require.Equal(t, 3, r.PositiveInt("N", 3))
	require.Equal(t, 4, r.NonNegativeInt("M", 4))
	require.Equal(t, 4, r.NonNegativeInt("F", 4))
	require.Equal(t, time.Second, r.Duration("D", time.Second))
	require.True(t, r.Bool("B", true))
	r.LogLevel("BRAID_LOG_LEVEL")
	require.Zero(t, Parsed(r, "P", strconv.Atoi))
	require.Zero(t, r.Common().ReplicationFactor)
	err := r.Err()
	require.Error(t, err)
	for _, want := range []string{`N="-1"`, `M="-2": want a non-negative integer`, `F="1.5"`, `D="soon"`, `B="maybe"`, `BRAID_LOG_LEVEL="loud"`, `P="x": strconv.Atoi`, `BRAID_KAFKA_REPLICATION_FACTOR="0": want a positive integer`} {
		require.ErrorContains(t, err, want)
	}
}
