package eventbustest

import (
	"fmt"
	"testing"

	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// testFetchDoesNotCommit: a record fetched but not committed is delivered
// again after a restart (a member closes, another joins the group): fetching
// must not commit, since the fetching process may die before it handled the
// record. A consumer that commits on fetch (auto-commit, ReadMessage)
// loses the records here.
func testFetchDoesNotCommit(t *testing.T, h Harness) {
	require.NoError(t, h.Publisher.Publish(ctxFor(t), records(h.Topic, "run-1", 5)...))
	group := newGroup()
	c1 := h.NewConsumer(t, group, h.Topic)
	require.Equal(t, []int{0, 1, 2, 3, 4}, seqs(t, fetchN(t, c1, 5)))
	require.NoError(t, c1.Close()) // a crash before handling: nothing committed

	stop := record(h.Topic, "run-1", 99)
	require.NoError(t, h.Publisher.Publish(ctxFor(t), stop))
	again := fetchUntil(t, h.NewConsumer(t, group, h.Topic), string(stop.Value))
	require.Equal(t, []int{0, 1, 2, 3, 4}, seqs(t, again), "uncommitted records were not delivered again")
}

// testCommittedIsNotRedelivered: after a restart the group resumes right
// after the last committed record: committed records are never read again,
// and every uncommitted one is (committing record n commits the
// partition's records before it too).
func testCommittedIsNotRedelivered(t *testing.T, h Harness) {
	require.NoError(t, h.Publisher.Publish(ctxFor(t), records(h.Topic, "run-1", 10)...))
	group := newGroup()
	c1 := h.NewConsumer(t, group, h.Topic)
	got := fetchN(t, c1, 10)
	require.NoError(t, c1.Commit(ctxFor(t), got[5])) // handled 0..5
	require.NoError(t, c1.Close())

	stop := record(h.Topic, "run-1", 99)
	require.NoError(t, h.Publisher.Publish(ctxFor(t), stop))
	again := fetchUntil(t, h.NewConsumer(t, group, h.Topic), string(stop.Value))
	require.Equal(t, []int{6, 7, 8, 9}, seqs(t, again), "after committing record 5")
}

// testDeadLetter: a poison record goes to <topic>.dlq with its key, value
// and headers, plus the reason and where it came from (topic, partition,
// offset), so an operator can find and replay it.
func testDeadLetter(t *testing.T, h Harness) {
	poison := record(h.Topic, "run-9", 0)
	poison.Value = []byte("\xff\xffnot protobuf")
	poison.Headers.Set("x", "y")
	require.NoError(t, h.Publisher.Publish(ctxFor(t), poison))
	c := h.NewConsumer(t, newGroup(), h.Topic)
	m := fetchN(t, c, 1)[0]
	require.NoError(t, h.Publisher.DeadLetter(ctxFor(t), m, "cannot decode"))
	require.NoError(t, c.Commit(ctxFor(t), m))

	dlq := eventsv1.DLQ(h.Topic)
	dm := fetchN(t, h.NewConsumer(t, newGroup(), dlq), 1)[0]
	require.Equal(t, dlq, dm.Topic)
	require.Equal(t, poison.Key, dm.Key)
	require.Equal(t, poison.Value, dm.Value)
	require.Equal(t, map[string]string{
		"seq": "0", "x": "y",
		eventsv1.HeaderDLQReason:    "cannot decode",
		eventsv1.HeaderDLQTopic:     h.Topic,
		eventsv1.HeaderDLQPartition: fmt.Sprint(m.Partition),
		eventsv1.HeaderDLQOffset:    fmt.Sprint(m.Offset),
	}, dm.Headers.Map())
}
