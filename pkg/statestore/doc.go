// Package statestore is the Redis seam of Braid: every key name (keys.go),
// every multi-key transition as a documented Lua script, and typed helpers
// around them. Keys carry the prefix "braid:" and a {run id} hash tag so one
// run's keys share a Redis Cluster slot.
//
// Every script is idempotent: go-redis may retry a command the server already
// ran, and Kafka redelivers, so running any script twice with the same
// arguments leaves the same state.
package statestore
