// Package statestore is the Redis seam of Braid: every key name (keys.go),
// every multi-key transition as a documented Lua script, and typed helpers
// around them. Keys carry the prefix "braid:" and a {run id} hash tag so one
// run's keys share a Redis Cluster slot.
//
// Every script is idempotent: go-redis may retry a command the server already
// ran, and Kafka redelivers, so running any script twice with the same
// arguments leaves the same state. The one exception is the run's history
// list, a log: a replayed write appends its lines again.
//
// The rules the services rely on are checked by package statestoretest,
// which every server the scripts run on must pass; Store binds Keys to a
// client for consumers that hold the store as an interface.
package statestore
