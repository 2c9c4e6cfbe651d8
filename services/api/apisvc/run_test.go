package apisvc_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/services/api/apisvc"
	"github.com/stretchr/testify/require"
)

// TestRunJoinsItsGoroutines: the HTTP server, the events feed, the
// run-ended listener and the Kafka clients are all gone when Run returns.
// Not parallel: it looks at every goroutine of the process.
func TestRunJoinsItsGoroutines(t *testing.T) {
	rdb := testinfra.StartRedis(t).Client(t)
	kafka := testinfra.StartKafka(t)
	require.NoError(t, rdb.Ping(context.Background()).Err())
	testinfra.RequireRunJoins(t, "api listening", func(ctx context.Context, logger *slog.Logger) error {
		return apisvc.Run(ctx, apisvc.Config{Addr: "127.0.0.1:0", AuthOff: true, Redis: rdb, Logger: logger,
			Keys: statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"},
			Bus:  eventbus.Config{Brokers: []string{kafka.Addr}, TopicPrefix: testinfra.UniqueName(t, "t") + "."}})
	})
}
