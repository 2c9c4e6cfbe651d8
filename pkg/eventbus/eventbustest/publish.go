package eventbustest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// testPublishReturnsAfterAck: once Publish returned nil, every record is
// on the bus, with its key, value and headers: a group that joins only
// afterwards reads all of them. A producer that buffers past its return
// (a batch timer, an async send) loses them here when nothing flushes it.
func testPublishReturnsAfterAck(t *testing.T, h Harness) {
	msgs := records(h.Topic, "run-1", 5)
	msgs[0].Headers.Set(eventsv1.HeaderTraceparent, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	require.NoError(t, h.Publisher.Publish(ctxFor(t), msgs...))
	require.NoError(t, h.Publisher.Publish(ctxFor(t)), "publishing nothing is a no-op")

	c := h.NewConsumer(t, newGroup(), h.Topic)
	got := fetchN(t, c, len(msgs))
	require.Len(t, got, len(msgs))
	for i, m := range got {
		require.Equal(t, h.Topic, m.Topic)
		require.Equal(t, msgs[i].Key, m.Key)
		require.Equal(t, msgs[i].Value, m.Value)
		require.Equal(t, msgs[i].Headers, m.Headers)
	}
}

// testPublishFailsWithoutBroker: with the broker gone, Publish returns an
// error rather than nil: nil means acknowledged, and nobody acknowledged.
func testPublishFailsWithoutBroker(t *testing.T, h Harness) {
	if h.StopBroker == nil {
		t.Skip("the harness cannot stop its broker")
	}
	require.NoError(t, h.Publisher.Publish(ctxFor(t), record(h.Topic, "run-1", 0)))
	h.StopBroker()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	require.Error(t, h.Publisher.Publish(ctx, record(h.Topic, "run-1", 1)),
		"Publish reported success with the broker down")
}

// testPerKeyOrder: the records of one key arrive in the order they were
// published — within one call and across calls, interleaved with other
// keys, and in a call big enough to be sent in parts — all from one
// partition, at increasing offsets.
func testPerKeyOrder(t *testing.T, h Harness) {
	keys := []string{"run-a", "run-b", "run-c", "run-d", "run-e", "run-f"}
	next := map[string]int{}
	var batch []eventbus.Message
	for round := range 3 {
		batch = batch[:0]
		for i := range 20 * len(keys) {
			k := keys[(i+round)%len(keys)]
			batch = append(batch, record(h.Topic, k, next[k]))
			next[k]++
		}
		require.NoError(t, h.Publisher.Publish(ctxFor(t), batch...))
	}
	big := records(h.Topic, "run-big", 2000)
	for i := range big {
		big[i].Value = fmt.Appendf(nil, "run-big/%d/%0512d", i, 0) // ~1 MiB in all
	}
	require.NoError(t, h.Publisher.Publish(ctxFor(t), big...))
	next["run-big"] = len(big)

	total := 0
	for _, n := range next {
		total += n
	}
	byKey := map[string][]eventbus.Message{}
	for _, m := range fetchN(t, h.NewConsumer(t, newGroup(), h.Topic), total) {
		byKey[string(m.Key)] = append(byKey[string(m.Key)], m)
	}
	for k, n := range next {
		requireInOrder(t, k, byKey[k], n)
	}
}

// requireInOrder checks that msgs are records 0..n-1 of key, from one
// partition, at increasing offsets.
func requireInOrder(t *testing.T, key string, msgs []eventbus.Message, n int) {
	t.Helper()
	require.Len(t, msgs, n, "records of key %s", key)
	for i, m := range msgs {
		var seq int
		_, err := fmt.Sscanf(string(m.Value)[len(key)+1:], "%d", &seq)
		require.NoError(t, err)
		require.Equal(t, i, seq, "key %s: record %d arrived in place %d", key, seq, i)
		require.Equal(t, msgs[0].Partition, m.Partition, "key %s spans partitions", key)
		if i > 0 {
			require.Greater(t, m.Offset, msgs[i-1].Offset, "key %s: offsets go back", key)
		}
	}
}
