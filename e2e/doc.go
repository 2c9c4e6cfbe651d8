// Package e2e holds Braid's end-to-end suites. The engine suite composes the
// real orchestrator and workers in one test process against a real
// redis-server and a Kafka-protocol broker (kfake) over TCP; the stack suite
// (separate OS processes, driven over HTTP) builds on it.
package e2e
