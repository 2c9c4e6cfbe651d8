package eventbus

import (
	"math/rand/v2"
	"testing"

	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

// TestAlignedRangeGivesEachMemberTheSameNumbersOnEveryTopic: whatever
// order the metadata lists partitions in, a member consumes the same
// partition numbers of every topic with the same partition count.
func TestAlignedRangeGivesEachMemberTheSameNumbersOnEveryTopic(t *testing.T) {
	t.Parallel()
	topics := []string{"workflow.start", "workflow.control", "task.complete"}
	members := []kafka.GroupMember{{ID: "orch-b", Topics: topics}, {ID: "orch-a", Topics: topics}}
	var parts []kafka.Partition
	for _, topic := range topics {
		for id := range 6 {
			parts = append(parts, kafka.Partition{Topic: topic, ID: id})
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		rnd.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		got := alignedRange{}.AssignGroups(members, parts)
		require.Equal(t, map[string][]int{"workflow.start": {0, 1, 2}, "workflow.control": {0, 1, 2}, "task.complete": {0, 1, 2}}, got["orch-a"])
		require.Equal(t, map[string][]int{"workflow.start": {3, 4, 5}, "workflow.control": {3, 4, 5}, "task.complete": {3, 4, 5}}, got["orch-b"])
	}
	require.Equal(t, "range", alignedRange{}.ProtocolName(), "compatible with members of older builds")
}
