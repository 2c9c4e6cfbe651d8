package worker_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/pkg/worker"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// TestRunJoinsGoroutinesOfRunningAttempts stops a worker while it runs an
// attempt whose handler blocks until its context ends: Run must hand the
// attempt back and return having joined every goroutine it started — the
// executors, the attempt's heartbeats and start notice, the publisher and
// the maintenance loops (goleak).
// Not parallel: goleak looks at every goroutine of the process.
func TestRunJoinsGoroutinesOfRunningAttempts(t *testing.T) {
	rdb := testinfra.StartRedis(t).Client(t)
	kafka := testinfra.StartKafka(t)
	ctx := context.Background()
	require.NoError(t, rdb.Ping(ctx).Err())
	keys := statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}
	bus := eventbus.Config{Brokers: []string{kafka.Addr}, TopicPrefix: testinfra.UniqueName(t, "t") + "."}
	require.NoError(t, eventbus.EnsureTopics(ctx, bus, eventsv1.TopicTaskDispatch, eventsv1.TopicTaskComplete))
	// The dispatch waits in the topic. The producer is closed before
	// RequireRunJoins looks: its background requests would start goroutines
	// in the in-process broker.
	require.NoError(t, rdb.HSet(ctx, keys.Nodes("run1"), "a", `{"s":"queued","a":1}`).Err())
	prod, err := eventbus.NewProducer(bus)
	require.NoError(t, err)
	m, err := eventbus.NewMessage(eventsv1.TopicTaskDispatch, "run1",
		&eventsv1.TaskDispatch{RunId: "run1", NodeId: "a", Attempt: 1, Handler: "block"})
	require.NoError(t, err)
	require.NoError(t, prod.Publish(ctx, m))
	require.NoError(t, prod.Close())

	var w *worker.Worker
	testinfra.RequireRunJoins(t, "attempt running", func(ctx context.Context, logger *slog.Logger) error {
		block := worker.HandlerFunc(func(ctx context.Context, _ *worker.Task) (any, error) {
			logger.Info("attempt running")
			<-ctx.Done()
			return nil, ctx.Err()
		})
		var err error
		w, err = worker.New(worker.Config{ID: testinfra.UniqueName(t, "w"), Bus: bus, Redis: rdb, Keys: keys,
			Group: testinfra.UniqueName(t, "g"), Handlers: map[string]worker.Handler{"block": block},
			HeartbeatInterval: beat, LogFlushInterval: beat, StartNotice: beat, DrainTimeout: 100 * time.Millisecond, Logger: logger})
		if err != nil {
			return err
		}
		return w.Run(ctx)
	})
	require.EqualValues(t, 1, w.Stats().HandedBack, "the attempt was not running when the worker stopped")
}
