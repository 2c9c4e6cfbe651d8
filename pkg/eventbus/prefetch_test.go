package eventbus

import (
	"context"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// TestRoomBoundsBytes: a pump waits once a record would take the held
// bytes over the bound, and goes on when a Fetch gives bytes back; a
// record is let in whatever its size when nothing is held.
func TestRoomBoundsBytes(t *testing.T) {
	t.Parallel()
	r := newRoom(100)
	ctx := t.Context()
	require.True(t, r.take(ctx, 60))
	require.True(t, r.take(ctx, 40), "exactly the bound fits")

	took := make(chan bool, 1)
	go func() { took <- r.take(ctx, 1) }()
	select {
	case <-took:
		t.Fatal("a record beyond the bound was let in")
	case <-time.After(50 * time.Millisecond):
	}
	r.give(60)
	select {
	case ok := <-took:
		require.True(t, ok)
	case <-time.After(waitFor):
		t.Fatal("the waiting pump was not woken by give")
	}
	r.give(41)
	require.True(t, r.take(ctx, 1000), "a record larger than the bound moves when nothing is held")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.False(t, r.take(cctx, 1), "a cancelled pump stops waiting")
}

// TestFetchReturnsTheWholePrefetch: a consumer whose FetchBuffer is its
// batch gets batches larger than kafka-go's own queue (kafkaQueueMax) —
// the orchestrator's batches were capped at 65 records by the default
// FetchBuffer, and its loop, busy with fixed costs per batch, capped the
// whole stack's throughput.
func TestFetchReturnsTheWholePrefetch(t *testing.T) {
	t.Parallel()
	b := newBus(t, testinfra.StartKafka(t), eventsv1.TopicTaskComplete)
	b.cfg.FetchBuffer = 1000
	c := b.consumer(t, testinfra.UniqueName(t, "g"), eventsv1.TopicTaskComplete)
	const n = 400
	publishResults(t, b.producer(t), "run-1", n)
	require.Eventually(t, func() bool { return len(c.msgs) == n-1 || len(c.msgs) == n }, waitFor, tick,
		"the prefetch never held the records")
	got, err := c.Fetch(testCtx(t), 1000)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(got), n-1, "one Fetch returns what was prefetched")
	for i, m := range got {
		require.Equal(t, i, attempt(t, m), "in order")
	}
}

// TestPrefetchBytesBoundsABatch: with PrefetchBytes set, a Fetch returns
// no more records than fit in it (one more only when the first is larger),
// and the records behind come in later Fetches, in order.
func TestPrefetchBytesBoundsABatch(t *testing.T) {
	t.Parallel()
	b := newBus(t, testinfra.StartKafka(t), eventsv1.TopicTaskComplete)
	b.cfg.FetchBuffer = 1000
	b.cfg.PrefetchBytes = 3 * result(t, "run-1", 5).size() // attempts 0–2 are no larger
	c := b.consumer(t, testinfra.UniqueName(t, "g"), eventsv1.TopicTaskComplete)
	publishResults(t, b.producer(t), "run-1", 30)
	require.Eventually(t, func() bool { return len(c.msgs) >= 3 }, waitFor, tick, "the prefetch never filled")
	require.Never(t, func() bool { return len(c.msgs) > 3 }, 100*time.Millisecond, tick, "the prefetch holds at most PrefetchBytes")
	var all []Message
	for len(all) < 30 {
		got, err := c.Fetch(testCtx(t), 1000)
		require.NoError(t, err)
		require.LessOrEqual(t, len(got), 3, "a batch within PrefetchBytes")
		all = append(all, got...)
	}
	require.Len(t, all, 30)
	for i, m := range all {
		require.Equal(t, i, attempt(t, m), "in order")
	}
}
