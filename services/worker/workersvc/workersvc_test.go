package workersvc_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/services/worker/workersvc"
	"github.com/stretchr/testify/require"
)

// TestRunJoinsItsGoroutines: the runtime's loops, the ops server and the
// Kafka clients are all gone when Run returns.
// Not parallel: it looks at every goroutine of the process.
func TestRunJoinsItsGoroutines(t *testing.T) {
	rdb := testinfra.StartRedis(t).Client(t)
	kafka := testinfra.StartKafka(t)
	require.NoError(t, rdb.Ping(context.Background()).Err())
	testinfra.RequireRunJoins(t, "worker started", func(ctx context.Context, logger *slog.Logger) error {
		return workersvc.Run(ctx, workersvc.Config{ID: "worker-join", Redis: rdb, Logger: logger, HTTPAddr: "127.0.0.1:0",
			DrainTimeout: time.Second, Keys: statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"},
			Bus: eventbus.Config{Brokers: []string{kafka.Addr}, TopicPrefix: testinfra.UniqueName(t, "t") + "."}})
	})
}

func TestRunRequiresARedisClient(t *testing.T) {
	t.Parallel()
	err := workersvc.Run(context.Background(), workersvc.Config{Bus: eventbus.Config{Brokers: []string{"127.0.0.1:1"}}})
	require.ErrorContains(t, err, "a Redis client is required")
}
