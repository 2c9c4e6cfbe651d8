// Package testinfra starts real dependencies for tests of every Braid module:
// a redis-server process, a Redis Cluster of six redis-server processes
// (three masters, three replicas) and a Kafka-protocol broker (franz-go's
// kfake) over TCP on free loopback ports, each stopped on t.Cleanup. It also
// hands out free ports and unique names so tests can share a broker and run
// in parallel, and checks that scripts keep to one cluster slot (Slot,
// SlotCheck) without a cluster.
//
// Helpers here call t.Fatal on failure and must be called from the test
// goroutine. Stop, Kill and Restart are not safe for concurrent use with
// each other (nor KillMaster, Restart and SyncReplicas of a cluster); the
// addresses they leave in place stay valid across restarts.
package testinfra
