package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/runstate"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/worker"
	"github.com/stretchr/testify/require"
)

// TestReconcilerFailsAttemptsWhoseHeartbeatsStop runs a worker that claims
// attempts and then never heartbeats (its interval is an hour, the node's
// heartbeat timeout one second): the reconciler must fail each attempt with
// a heartbeat timeout, retry it, and fail the run when attempts run out.
func TestReconcilerFailsAttemptsWhoseHeartbeatsStop(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{noWorkers: true, reconcileEvery: 300 * time.Millisecond})
	hang := worker.HandlerFunc(func(ctx context.Context, _ *worker.Task) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	w, err := worker.New(worker.Config{ID: "silent-worker", Bus: e.bus, Redis: e.rdb, Keys: e.keys,
		Handlers: map[string]worker.Handler{"hang": hang}, HeartbeatInterval: time.Hour, DrainTimeout: time.Second,
		Logger: testLogger(t)})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-stopped })

	name, v := e.register([]byte(`{"name":"silent","nodes":[{"id":"stuck","handler":"hang","heartbeat_timeout":"1s",
	  "retry":{"max_attempts":2,"initial_interval":"100ms"}}]}`))
	id := e.start(name, v, `{}`)
	st := e.wait(id, 30*time.Second)
	require.Equal(t, string(runstate.RunFailed), st.Fields[statestore.FieldStatus])
	rec := nodeRecord(t, st, "stuck")
	require.Equal(t, 2, rec.Attempt)
	require.Contains(t, rec.Error, "heartbeat timeout: worker silent-worker stopped responding")
	hist, err := e.rdb.LRange(context.Background(), e.keys.History(id), 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, grep(hist, "lost its worker silent-worker"), 2, "%v", hist)
}
