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

// TestConsumerPrefetchesABatch: the orchestrator's consumer prefetches as
// many records as a batch holds (BatchMax), unless its Bus says otherwise.
// With eventbus's default of 64 every batch held at most 65 records, and
// under load the loop spent its time on the fixed costs of small batches
// (the diamond load's throughput 20–25 % lower).
func TestConsumerPrefetchesABatch(t *testing.T) {
	t.Parallel()
	require.Equal(t, 1000, Config{}.withDefaults().Bus.FetchBuffer)
	require.Equal(t, 300, Config{BatchMax: 300}.withDefaults().Bus.FetchBuffer)
	require.Equal(t, 50, Config{BatchMax: 300, Bus: eventbus.Config{FetchBuffer: 50}}.withDefaults().Bus.FetchBuffer)
}
