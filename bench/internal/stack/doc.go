// Package stack starts what the benchmarks run as separate OS processes:
// the infrastructure (Infra) — one kfake broker and one redis-server with
// `braid dev --only infra`, or a 3-master, 3-replica Redis Cluster and a
// 3-broker kfakebroker — and on it an orchestrator, N workers and the api
// from their binaries, configured only through BRAID_* environment
// variables, under a unique topic prefix and Redis namespace. Processes are
// supervised and stopped by PID through pkg/testkit/procstack.
package stack
