package orchsvc

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/testinfra"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

func TestCommitLoopCommitsEveryQueuedBatchInOrder(t *testing.T) {
	t.Parallel()
	kafka := testinfra.StartKafka(t)
	bus := eventbus.Config{Brokers: []string{kafka.Addr}, ClientID: "commit-test", TopicPrefix: testinfra.UniqueName(t, "t") + "."}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, eventbus.EnsureTopics(ctx, bus, eventsv1.TopicWorkflowControl))
	prod, err := eventbus.NewProducer(bus)
	require.NoError(t, err)
	t.Cleanup(func() { _ = prod.Close() })
	const total = 30
	for i := range total {
		m, err := eventbus.NewMessage(eventsv1.TopicWorkflowControl, fmt.Sprintf("run-%d", i%4), &eventsv1.RunControl{RunId: fmt.Sprintf("run-%d", i%4)})
		require.NoError(t, err)
		require.NoError(t, prod.Publish(ctx, m))
	}
	group := testinfra.UniqueName(t, "g")
	fetchAll := func(want int) (*eventbus.Consumer, [][]eventbus.Message) {
		cons, err := eventbus.NewConsumer(bus, group, eventsv1.TopicWorkflowControl)
		require.NoError(t, err)
		var batches [][]eventbus.Message
		for n := 0; n < want; {
			msgs, err := cons.Fetch(ctx, 7)
			require.NoError(t, err)
			batches, n = append(batches, msgs), n+len(msgs)
		}
		return cons, batches
	}
	cons, batches := fetchAll(total)
	s := &Service{cons: cons, log: slog.New(slog.DiscardHandler)}
	queue := make(chan []eventbus.Message, len(batches))
	for _, b := range batches {
		queue <- b
	}
	close(queue)
	s.commitLoop(ctx, queue) // returns once the closed queue is drained
	require.NoError(t, cons.Close())

	// A new member of the group starts past every committed record.
	m, err := eventbus.NewMessage(eventsv1.TopicWorkflowControl, "run-0", &eventsv1.RunControl{RunId: "after"})
	require.NoError(t, err)
	require.NoError(t, prod.Publish(ctx, m))
	next, got := fetchAll(1)
	t.Cleanup(func() { _ = next.Close() })
	require.Len(t, got, 1)
	require.Len(t, got[0], 1, "records committed by the loop were delivered again")
	rc := &eventsv1.RunControl{}
	require.NoError(t, eventbus.Decode(got[0][0], rc))
	require.Equal(t, "after", rc.GetRunId())
}
