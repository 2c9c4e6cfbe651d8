package apisvc

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// TestFeedReadsOnlyWhileWatched: the feed opens no tail until a stream
// acquires it, delivers every event appended after acquire returned (and
// none from before), is shared by concurrent streams, closes FeedLinger
// after the last one released it, opens again for the next, and refuses
// streams once stopped.
func TestFeedReadsOnlyWhileWatched(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	bus := eventbus.Config{Brokers: k.Addrs, TopicPrefix: testinfra.UniqueName(t, "t") + "."}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, eventbus.EnsureTopics(ctx, bus, eventsv1.TopicWorkflowEvents))
	prod, err := eventbus.NewProducer(bus)
	require.NoError(t, err)
	defer func() { require.NoError(t, prod.Close()) }()
	publish := func(seq uint64) {
		t.Helper()
		m, err := eventbus.NewMessage(eventsv1.TopicWorkflowEvents, "r1", &eventsv1.RunEvent{RunId: "r1", Seq: seq})
		require.NoError(t, err)
		require.NoError(t, prod.Publish(ctx, m))
	}
	const linger = 200 * time.Millisecond
	h := newHub(16)
	f := newFeed(bus, h, linger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	sub := h.subscribe("r1")
	defer h.unsubscribe(sub)
	next := func() uint64 {
		t.Helper()
		select {
		case ev := <-sub.events:
			return ev.Seq
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10s")
			return 0
		}
	}

	publish(1) // nobody watches: not read
	open, users, opened := f.state()
	require.False(t, open)
	require.Zero(t, users)
	require.Zero(t, opened)

	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { require.NoError(t, f.acquire(ctx)) })
	}
	wg.Wait()
	open, users, opened = f.state()
	require.True(t, open)
	require.Equal(t, 3, users)
	require.Equal(t, 1, opened, "concurrent streams share one tail")
	publish(2)
	require.Equal(t, uint64(2), next(), "the event before the feed opened is not delivered, the one after is")

	f.release()
	f.release()
	require.Never(t, func() bool { open, _, _ := f.state(); return !open }, 2*linger, 10*time.Millisecond,
		"closed while a stream still used it")
	f.release()
	require.Eventually(t, func() bool { open, _, _ := f.state(); return !open }, 10*time.Second, 10*time.Millisecond,
		"the tail stays open after the last stream left")

	publish(3) // closed again: not read
	require.NoError(t, f.acquire(ctx))
	publish(4)
	require.Equal(t, uint64(4), next())
	_, _, opened = f.state()
	require.Equal(t, 2, opened)
	require.NoError(t, f.acquire(ctx)) // within the linger of a release: the same tail
	f.release()
	require.Never(t, func() bool { open, _, _ := f.state(); return !open }, 2*linger, 10*time.Millisecond,
		"closed while a stream still used it")
	_, _, opened = f.state()
	require.Equal(t, 2, opened)

	require.NoError(t, f.stop())
	open, _, _ = f.state()
	require.False(t, open)
	require.ErrorIs(t, f.acquire(ctx), errFeedStopped)
	f.release() // the stream that still held it ends after the stop
	require.NoError(t, f.stop())
	require.NoError(t, f.healthy())
	require.Empty(t, sub.events)
}

// TestFeedOpenFailure: when the tail cannot be opened the stream gets the
// error, is not counted, and the feed reports itself unhealthy for a while.
func TestFeedOpenFailure(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	bus := eventbus.Config{Brokers: k.Addrs, TopicPrefix: testinfra.UniqueName(t, "t") + ".", AdminTimeout: time.Second}
	f := newFeed(bus, newHub(1), time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := f.acquire(ctx) // the topic was never created
	require.ErrorContains(t, err, "open the run events feed")
	open, users, opened := f.state()
	require.False(t, open)
	require.Zero(t, users)
	require.Zero(t, opened)
	require.ErrorContains(t, f.healthy(), "reading workflow.events failed")
	require.NoError(t, f.stop())
}
