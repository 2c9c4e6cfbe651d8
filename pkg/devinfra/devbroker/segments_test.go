package devbroker_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/devinfra/devbroker"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestPrepareSegmentsAreTheFilesKfakeWrites: a topic's creation leaves
// each partition's empty first segment files, kfake's produce writes into
// exactly those (no other file appears), and a restarted broker serves
// every record — partitions never written included. It fails when the
// pinned kfake names or places its segments differently.
func TestPrepareSegmentsAreTheFilesKfakeWrites(t *testing.T) {
	const parts = 6
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	start := func() (*kfake.Cluster, eventbus.Config) {
		c, err := kfake.NewCluster(devbroker.Options(dir, parts)...)
		require.NoError(t, err)
		devbroker.PrepareSegments(c, dir, parts)
		return c, eventbus.Config{Brokers: c.ListenAddrs()}
	}
	files := func(topic string, p int) map[string]int64 {
		entries, err := os.ReadDir(filepath.Join(dir, "partitions", fmt.Sprintf("%s-%d", topic, p)))
		require.NoError(t, err, "partition %d's directory exists", p)
		out := map[string]int64{}
		for _, e := range entries {
			info, err := e.Info()
			require.NoError(t, err)
			out[e.Name()] = info.Size()
		}
		return out
	}
	topic := eventsv1.TopicTaskComplete

	first, cfg := start()
	require.NoError(t, eventbus.EnsureTopics(ctx, cfg, topic))
	for p := range parts {
		require.Equal(t, map[string]int64{"0.dat": 0, "0.idx": 0}, files(topic, p), "partition %d before any record", p)
	}

	prod, err := eventbus.NewProducer(cfg)
	require.NoError(t, err)
	const n = 4 // fewer keys than partitions: some stay empty
	msgs := make([]eventbus.Message, n)
	for i := range msgs {
		msgs[i], err = eventbus.NewMessage(topic, fmt.Sprintf("run-%d", i), &eventsv1.TaskResult{RunId: fmt.Sprintf("run-%d", i), NodeId: "n", Attempt: 1})
		require.NoError(t, err)
	}
	require.NoError(t, prod.Publish(ctx, msgs...))
	require.NoError(t, prod.Close())
	written := 0
	for p := range parts {
		got := files(topic, p)
		require.ElementsMatch(t, []string{"0.dat", "0.idx"}, slices.Collect(maps.Keys(got)), "partition %d: kfake wrote into the prepared files, no others", p)
		if got["0.dat"] > 0 {
			written++
			require.Positive(t, got["0.idx"], "partition %d's index entry", p)
		}
	}
	require.Positive(t, written, "the records landed in prepared segments")
	require.Less(t, written, parts, "some partitions stayed empty")

	// A restarted broker loads the empty prepared segments of the
	// partitions never written and serves every record.
	first.Close()
	second, cfg := start()
	defer second.Close()
	cons, err := eventbus.NewConsumer(ctx, cfg, "g", topic)
	require.NoError(t, err)
	defer func() { require.NoError(t, cons.Close()) }()
	seen := map[string]bool{}
	for len(seen) < n && ctx.Err() == nil {
		got, err := cons.Fetch(ctx, n)
		require.NoError(t, err)
		for _, m := range got {
			seen[string(m.Key)] = true
		}
	}
	require.Len(t, seen, n, "every record read back after the restart")
}
