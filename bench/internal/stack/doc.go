// Package stack starts the Braid services as separate OS processes for the
// benchmarks: on one procstack.Infra (`braid dev --only infra`), an
// orchestrator, N workers and the api from their binaries, configured only
// through BRAID_* environment variables, under a unique topic prefix and
// Redis namespace. Processes are supervised and stopped by PID through
// pkg/testkit/procstack.
package stack
