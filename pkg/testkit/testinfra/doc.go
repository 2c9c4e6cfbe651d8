// Package testinfra starts real dependencies for tests of every Braid module:
// a redis-server process and a Kafka-protocol broker (franz-go's kfake) over
// TCP on free loopback ports, each stopped on t.Cleanup. It also hands out
// free ports and unique names so tests can share a broker and run in
// parallel.
//
// Helpers here call t.Fatal on failure and must be called from the test
// goroutine. Stop, Kill and Restart are not safe for concurrent use with
// each other; the addresses they leave in place stay valid across restarts.
package testinfra
