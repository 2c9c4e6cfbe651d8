// Package core is the orchestrator's decision core: a pure state machine.
//
// A Run holds one run's state in memory. Apply feeds it one Event (a start, a
// task result, a control request, a due timer) and records what must happen
// next in Effects: node records to persist, outputs to store, tasks to
// dispatch, timers to arm, state changes to publish. Nothing in this package
// touches Redis, Kafka or the clock; time arrives as a value inside each event.
// The orchestrator's shell loads a Run, applies a batch of events, persists
// the effects under the run's lock and fencing token, then publishes.
//
// Readiness is O(1) per completion: every node record keeps a counter of
// unfinished parents, decremented when a parent reaches a terminal state; a
// node is evaluated (trigger rule, then `when`, then template resolution) only
// when its counter reaches zero, or earlier for the eager trigger rules
// one_success and one_failed.
package core
