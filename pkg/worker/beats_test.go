package worker

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// heldBeat grants every claim and holds the first heartbeat until release
// is closed (or the call times out).
type heldBeat struct {
	held    chan struct{} // closed when the first heartbeat is being held
	release chan struct{}
	once    sync.Once
}

func (c *heldBeat) ClaimAttempts(_ context.Context, reqs []statestore.ClaimRequest, _ string) ([]statestore.Claimed, error) {
	out := make([]statestore.Claimed, len(reqs))
	for i := range out {
		out[i].Result = statestore.ClaimOK
	}
	return out, nil
}

func (c *heldBeat) Heartbeat(ctx context.Context, _ statestore.Attempt, _ string, _ time.Duration) (statestore.ClaimResult, error) {
	first := false
	c.once.Do(func() { first = true })
	if !first {
		return statestore.ClaimOK, nil
	}
	close(c.held)
	select {
	case <-c.release:
		return statestore.ClaimOK, nil
	case <-ctx.Done():
		return statestore.ClaimOK, ctx.Err()
	}
}

func (c *heldBeat) ReleaseClaim(context.Context, statestore.Attempt, string) error { return nil }

func (c *heldBeat) RenewLiveness(context.Context, string, string, time.Duration) (string, error) {
	return "", nil
}

// TestRunWaitsForHeartbeatInFlight: an attempt finishes and its result is
// published while a refresh of its claim is still talking to the store.
// Stopping the worker then must not let Run return before that heartbeat
// goroutine has: Run joins the attempts' heartbeats.
func TestRunWaitsForHeartbeatInFlight(t *testing.T) {
	t.Parallel()
	rdb := testinfra.StartRedis(t).Client(t)
	kafka := testinfra.StartKafka(t)
	bus := eventbus.Config{Brokers: []string{kafka.Addr}, TopicPrefix: testinfra.UniqueName(t, "t") + "."}
	require.NoError(t, eventbus.EnsureTopics(context.Background(), bus, eventsv1.TopicTaskDispatch, eventsv1.TopicTaskComplete))
	claims := &heldBeat{held: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-claims.release:
		default:
			close(claims.release)
		}
	})
	h := HandlerFunc(func(context.Context, *Task) (any, error) {
		<-claims.held // finish only once a heartbeat is in flight
		return "done", nil
	})
	w, err := New(Config{ID: testinfra.UniqueName(t, "w"), Bus: bus, Redis: rdb,
		Keys: statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}, Group: testinfra.UniqueName(t, "g"),
		Handlers: map[string]Handler{"h": h}, HeartbeatInterval: 20 * time.Millisecond, DrainTimeout: time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	w.claims = claims

	prod, err := eventbus.NewProducer(bus)
	require.NoError(t, err)
	t.Cleanup(func() { _ = prod.Close() })
	m, err := eventbus.NewMessage(eventsv1.TopicTaskDispatch, "run1",
		&eventsv1.TaskDispatch{RunId: "run1", NodeId: "a", Attempt: 1, Handler: "h"})
	require.NoError(t, err)
	require.NoError(t, prod.Publish(context.Background(), m))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case <-claims.held:
	case <-time.After(20 * time.Second):
		t.Fatal("no heartbeat within 20s")
	}
	require.Eventually(t, func() bool { return w.Stats().Published == 1 && w.inflight.len() == 0 },
		20*time.Second, 10*time.Millisecond, "the attempt's result was not published")

	cancel()
	require.Never(t, func() bool { return len(done) > 0 }, 2*time.Second, 10*time.Millisecond,
		"Run returned while a heartbeat goroutine was still running")
	close(claims.release)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20s of the heartbeat's release")
	}
}
