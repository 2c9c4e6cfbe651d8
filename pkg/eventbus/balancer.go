package eventbus

import (
	"cmp"
	"slices"

	"github.com/segmentio/kafka-go"
)

// alignedRange is kafka-go's range balancer given the partitions in order.
// Every record of a run — its start, its controls, its tasks' results —
// is keyed by the run id, so it lands on the same partition number of
// each topic, and the orchestrators rely on one member consuming that
// number on every topic: a run is then handled by one orchestrator, which
// keeps its lock. kafka-go's RangeGroupBalancer ranges over the partitions
// in the order the metadata lists them, and a broker may list them in any
// order (kfake does): one member then got partitions 1–3 of one topic and
// 3–5 of another, and two orchestrators passed a run's lock back and
// forth, each waiting for the other (seen on the Redis Cluster e2e suite).
// Sorting first makes the assignment the same for every topic with the
// same partition count.
//
// It keeps the "range" protocol name and user data, so members of an
// older build still agree on the protocol during a rolling upgrade.
type alignedRange struct{ kafka.RangeGroupBalancer }

// AssignGroups is RangeGroupBalancer.AssignGroups over partitions sorted
// by topic and id.
func (b alignedRange) AssignGroups(members []kafka.GroupMember, partitions []kafka.Partition) kafka.GroupMemberAssignments {
	sorted := slices.Clone(partitions)
	slices.SortFunc(sorted, func(a, b kafka.Partition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.ID, b.ID))
	})
	return b.RangeGroupBalancer.AssignGroups(members, sorted)
}
