package testinfra

import "github.com/braidhq/braid/pkg/statestore"

// SlotCount is the number of hash slots of a Redis Cluster.
const SlotCount = statestore.SlotCount

// Slot is the Redis Cluster hash slot of key (statestore.HashSlot, which
// this package's tests pin against a real cluster's CLUSTER KEYSLOT).
func Slot(key string) int { return statestore.HashSlot(key) }
