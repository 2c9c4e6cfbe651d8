// Package runstate defines the durable shape of a run: run and node instance
// states, the compact node record stored per node in Redis, and the rules that
// say which states are terminal. It is pure data with no I/O, shared by the
// orchestrator's decision core, the state store, the worker's claim check and
// the api.
package records
