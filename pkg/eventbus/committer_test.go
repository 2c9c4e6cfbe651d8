package eventbus

import (
	"log/slog"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// TestCommitterCommitsAddedRecords hands a Committer batches as a
// consumer fetches them: the group's offsets reach the end of every
// partition without Close (after the delay), and a new member of the group
// starts past every record added.
func TestCommitterCommitsAddedRecords(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	p := b.producer(t)
	keys := keysByPartition(t, 3)
	const perKey = 10
	var msgs []Message
	for i := range perKey {
		for _, key := range keys {
			msgs = append(msgs, result(t, key, i))
		}
	}
	require.NoError(t, p.Publish(testCtx(t), msgs...))
	group := testinfra.UniqueName(t, "g")
	c := b.consumer(t, group, eventsv1.TopicTaskComplete)
	com := NewCommitter(c, 20*time.Millisecond, slog.New(slog.DiscardHandler))
	t.Cleanup(com.Close)
	ends := map[int]int64{}
	for n := 0; n < len(msgs); {
		got, err := c.Fetch(testCtx(t), 7)
		require.NoError(t, err)
		com.Add(got...)
		for _, m := range got {
			ends[m.Partition] = max(ends[m.Partition], m.Offset+1)
		}
		n += len(got)
	}
	require.Len(t, ends, 3)
	require.Eventually(t, func() bool {
		for part, end := range ends {
			if committedOffset(t, b, group, eventsv1.TopicTaskComplete, part) != end {
				return false
			}
		}
		return true
	}, waitFor, tick, "offsets never committed up to %v", ends)
	com.Close()
	com.Add(msgs...) // after Close: ignored, no panic
	require.NoError(t, c.Close())

	require.NoError(t, p.Publish(testCtx(t), result(t, keys[0], 99)))
	next := b.consumer(t, group, eventsv1.TopicTaskComplete)
	got := fetchN(t, next, 1)
	require.Len(t, got, 1, "records committed by the committer were delivered again")
	require.Equal(t, 99, attempt(t, got[0]))
}

// TestCommitterCloseCommitsAtOnce adds records with a delay far longer
// than the test: Close commits them without waiting for it, keeping each
// partition's highest offset whatever the order they were added in.
func TestCommitterCloseCommitsAtOnce(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	publishResults(t, b.producer(t), "run-1", 6)
	group := testinfra.UniqueName(t, "g")
	c := b.consumer(t, group, eventsv1.TopicTaskComplete)
	got := fetchN(t, c, 6)
	com := NewCommitter(c, time.Hour, slog.New(slog.DiscardHandler))
	com.Add(got[5])
	com.Add(got[1], got[2]) // older records of the same partition change nothing
	com.Close()
	com.Close() // twice is fine
	require.Equal(t, got[5].Offset+1, committedOffset(t, b, group, eventsv1.TopicTaskComplete, got[5].Partition))
}
