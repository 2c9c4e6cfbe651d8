// Package records defines every stored shape the services share, in one
// place the api, the orchestrator and the worker all read: run and node
// instance states and the rules that say which are terminal, the compact
// node record stored per node, past attempts and claim holders, the run
// hash's field names, a worker's registry entry and an attempt's log line.
// It is pure data with no I/O; pkg/statestore reads and writes these
// shapes in Redis.
package records
