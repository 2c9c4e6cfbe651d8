package orchsvc

import (
	"context"
	"log/slog"
	"testing"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/stretchr/testify/require"
)

// TestRunJoinsItsGoroutines: the pump, the duties, the lock keep-alive, the
// ops server and the Kafka clients are all gone when Run returns.
// Not parallel: it looks at every goroutine of the process.
func TestRunJoinsItsGoroutines(t *testing.T) {
	rdb := testinfra.StartRedis(t).Client(t)
	kafka := testinfra.StartKafka(t)
	require.NoError(t, rdb.Ping(context.Background()).Err())
	testinfra.RequireRunJoins(t, "orchestrator started", func(ctx context.Context, logger *slog.Logger) error {
		return Run(ctx, Config{ID: "orch-join", Redis: rdb, Logger: logger, MetricsAddr: "127.0.0.1:0",
			Keys:  statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"},
			Group: testinfra.UniqueName(t, "g"),
			Bus:   eventbus.Config{Brokers: []string{kafka.Addr}, TopicPrefix: testinfra.UniqueName(t, "t") + "."}})
	})
}
