package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/records"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// TestPoisonMessagesGoToDLQ sends undecodable and invalid messages, a start
// for an unknown workflow and a result for an unknown run to every consumed
// topic: each lands on its .dlq topic with a reason, and a run started
// afterwards still completes.
func TestPoisonMessagesGoToDLQ(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{workers: 1})
	ctx := context.Background()
	poison := []eventbus.Message{
		{Topic: eventsv1.TopicWorkflowStart, Key: []byte("x"), Value: []byte("\xff\xff not protobuf")},
		{Topic: eventsv1.TopicTaskComplete, Key: []byte("x"), Value: []byte{0x0a, 0x05, 'a'}},
		{Topic: eventsv1.TopicWorkflowControl, Key: []byte("x"), Value: []byte{}},
		{Topic: eventsv1.TopicTaskDispatch, Key: []byte("x"), Value: []byte("garbage")},
	}
	unknownWF, err := eventbus.NewMessage(eventsv1.TopicWorkflowStart, "r-unknown", &eventsv1.RunStartRequested{RunId: "r-unknown", Workflow: "nope", Version: 1})
	require.NoError(t, err)
	unknownRun, err := eventbus.NewMessage(eventsv1.TopicTaskComplete, "never-started", &eventsv1.TaskResult{
		RunId: "never-started", NodeId: "A", Attempt: 1, Status: eventsv1.TaskStatus_TASK_STATUS_SUCCEEDED})
	require.NoError(t, err)
	poison = append(poison, unknownWF, unknownRun)
	require.NoError(t, e.prod.Publish(ctx, poison...))

	name, v := e.register(readExample(t, "seed-000-example-workflow.json"))
	st := e.wait(e.start(name, v, `{}`), 30*time.Second)
	require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus])

	want := map[string]int{
		eventsv1.DLQ(eventsv1.TopicWorkflowStart): 2, eventsv1.DLQ(eventsv1.TopicTaskComplete): 2,
		eventsv1.DLQ(eventsv1.TopicWorkflowControl): 1, eventsv1.DLQ(eventsv1.TopicTaskDispatch): 1,
	}
	for topic, n := range want {
		c, err := eventbus.NewConsumer(t.Context(), e.bus, "dlq-reader-"+topic, topic)
		require.NoError(t, err)
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		var got []eventbus.Message
		for len(got) < n {
			msgs, err := c.Fetch(rctx, n)
			require.NoError(t, err, "reading %s", topic)
			got = append(got, msgs...)
		}
		cancel()
		_ = c.Close()
		for _, m := range got {
			require.NotEmpty(t, m.Headers.Get(eventsv1.HeaderDLQReason), "%s record without a reason", topic)
		}
	}
}
