package eventbus

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestPrepareLeavesPublishNothingToLookUp: after Prepare, the first Publish
// to the prepared topics opens no connection and asks for no metadata —
// it sends its produce requests and nothing else — on one broker and on
// three (a connection per leader). Without Prepare the same Publish does
// both (so the counting is able to see them).
func TestPrepareLeavesPublishNothingToLookUp(t *testing.T) {
	t.Parallel()
	for _, brokers := range []int{1, 3} {
		t.Run(fmt.Sprintf("brokers=%d", brokers), func(t *testing.T) {
			t.Parallel()
			prepareLeavesNothing(t, testinfra.StartKafkaCluster(t, brokers))
		})
	}
}

func prepareLeavesNothing(t *testing.T, k *testinfra.Kafka) {
	var metadata atomic.Int64
	k.Cluster.ControlKey(kmsg.Metadata.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		metadata.Add(1)
		return nil, nil, false
	})
	b := newBus(t, k, threeTopics...)
	var dials atomic.Int64
	var d net.Dialer
	b.cfg.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, address)
	}
	msgs, want := published(b.cfg, threeTopics, keysByPartition(t, DefaultPartitions), 1, 0)

	cold := b.producer(t)
	dials.Store(0)
	metadata.Store(0)
	require.NoError(t, cold.Publish(testCtx(t), msgs...))
	require.Positive(t, dials.Load(), "an unprepared producer dials at its first Publish")
	require.Positive(t, metadata.Load(), "and asks for metadata")

	// kafka-go's transport refreshes its metadata every metadataTTL in the
	// background, which may dial or ask within the window by chance: a
	// prepared producer must show neither in one of three tries (an
	// unprepared one shows both every time).
	var warm *Producer
	clean, copies := false, 1
	for range 3 {
		warm = b.producer(t)
		require.NoError(t, warm.Prepare(testCtx(t), threeTopics...))
		dials.Store(0)
		metadata.Store(0)
		require.NoError(t, warm.Publish(testCtx(t), msgs...))
		copies++
		if clean = dials.Load() == 0 && metadata.Load() == 0; clean {
			break
		}
	}
	require.True(t, clean, "a prepared producer's first Publish dials nothing and asks for no metadata (last try: %d dials, %d metadata requests)", dials.Load(), metadata.Load())
	requireDelivered(t, k, repeated(want, copies))

	require.NoError(t, warm.Close())
	require.ErrorIs(t, warm.Prepare(testCtx(t), threeTopics...), ErrClosed)
}

// repeated is want with each partition's values written n times over.
func repeated(want map[string][]string, n int) map[string][]string {
	out := map[string][]string{}
	for part, values := range want {
		for range n {
			out[part] = append(out[part], values...)
		}
	}
	return out
}
