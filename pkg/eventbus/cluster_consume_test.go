package eventbus

import (
	"fmt"
	"testing"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// TestConsumerGroupAcrossLeaderMovesAndBrokerLoss: a group of two members
// reading a topic of a three-broker cluster keeps consuming, and its
// commits keep landing, when every partition gets a new leader, when the
// broker that coordinates the group is killed (its partitions and the
// group move to the two left), and when that broker comes back. Committed
// offsets reach the end of every partition and stay there across the
// broker's loss and return, and a new member of the group afterwards reads
// only what was published after them.
func TestConsumerGroupAcrossLeaderMovesAndBrokerLoss(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafkaCluster(t, 3)
	topic := eventsv1.TopicTaskComplete
	b := newBus(t, k, topic)
	p := b.producer(t)
	group := groupNotOn(t, k, k.Controller())
	coord := k.Cluster.CoordinatorFor(group)
	members := []*Consumer{b.consumer(t, group, topic), b.consumer(t, group, topic)}
	readers := []*groupReader{readGroup(t, members[0]), readGroup(t, members[1])}
	keys := keysByPartition(t, DefaultPartitions)

	sent := 0
	phase := func(name string) {
		t.Helper()
		publishSeqs(t, p, topic, keys, sent, sent+20, name)
		sent += 20
		t.Logf("phase %s: published", name)
		waitUntil(t, name, func() (bool, string) {
			n := distinct(readers)
			return n == sent*len(keys), fmt.Sprintf("read %d of %d records; transient errors %v %v",
				n, sent*len(keys), readers[0].errors(), readers[1].errors())
		})
		t.Logf("phase %s: read", name)
		requireCommittedToEnd(t, b, group, topic)
	}

	// kfake never expires a member whose JoinGroup answer it could not
	// deliver (DESIGN.md, "kfake caveat"), so killing the coordinator in
	// the middle of a join would leave a ghost member holding partitions
	// for good; real Kafka expires it after its session. Kill it only
	// once the group is stable.
	stable := func() {
		t.Helper()
		_, err := k.Cluster.WaitGroupStable(testCtx(t), group, len(members))
		require.NoError(t, err, "group %s never stable with %d members", group, len(members))
	}
	stable()
	phase("before")
	k.Cluster.ShufflePartitionLeaders()
	phase("after every partition got a new leader")
	stable()
	k.StopBroker(t, coord)
	require.NotEqual(t, coord, k.Cluster.CoordinatorFor(group), "the group's coordinator moved")
	phase(fmt.Sprintf("with broker %d, the group's coordinator, dead", coord))
	k.StartBroker(t, coord)
	phase(fmt.Sprintf("after broker %d came back", coord))
	for i, r := range readers {
		r.stop()
		require.NoError(t, members[i].Close())
		t.Logf("member %d: %d records, transient errors: %v", i, len(r.messages()), r.errors())
	}

	// Nothing committed is read again: a new member gets exactly the new
	// records, one per partition, and no older one before them.
	fresh := b.consumer(t, group, topic)
	for i, key := range keys {
		require.NoError(t, p.Publish(testCtx(t), seqRecord(topic, key, sent+i)))
	}
	got := fetchN(t, fresh, len(keys))
	for _, m := range got {
		_, seq := seqOf(t, m)
		require.GreaterOrEqual(t, seq, sent, "record %q was committed and came again", m.Value)
	}
}

// groupNotOn returns a unique group name whose coordinator is not node.
func groupNotOn(t *testing.T, k *testinfra.Kafka, node int32) string {
	t.Helper()
	for i := range 100 {
		g := testinfra.UniqueName(t, fmt.Sprintf("g%d", i))
		if k.Cluster.CoordinatorFor(g) != node {
			return g
		}
	}
	t.Fatalf("every group name lands on node %d", node)
	return ""
}

// distinct counts the distinct records the readers got.
func distinct(readers []*groupReader) int {
	seen := map[string]bool{}
	for _, r := range readers {
		for _, m := range r.messages() {
			seen[string(m.Value)] = true
		}
	}
	return len(seen)
}

// requireCommittedToEnd waits until group's committed offset of every
// partition of topic is the partition's end offset.
func requireCommittedToEnd(t *testing.T, b bus, group, topic string) {
	t.Helper()
	waitUntil(t, "offsets committed to the end", func() (bool, string) {
		end := endOffsets(t, b.kafka, b.cfg.topic(topic), DefaultPartitions)
		for part, off := range end {
			if got := committedOffset(t, b, group, topic, part); got != off {
				return false, fmt.Sprintf("partition %d: committed %d, end %d", part, got, off)
			}
		}
		return true, ""
	})
}
