// Package worker is Braid's worker runtime and SDK: the Task and Handler
// types a handler implements, and Worker, which consumes task.dispatch,
// claims each attempt in Redis, runs its handler and publishes a TaskResult on
// task.complete. Users build their own worker binary by passing their
// handlers to New; services/worker does the same with the built-ins of
// pkg/handler.
//
// # Delivery
//
// Kafka delivers a dispatch at least once. Before running it, the worker
// claims the attempt (SET NX with a TTL, after checking that the node record
// still names this attempt as in flight; every dispatch of a fetched batch
// in one pipelined round trip, statestore.Keys.ClaimAttempts), and commits
// the dispatch's offset once it is claimed or dropped. The claim is
// the durable effect of a dispatch: duplicates find it taken and are dropped,
// and if this worker dies mid-task the claim expires (no heartbeat refreshes
// it) and the orchestrator's reconciler retries the attempt. A result may
// therefore be published more than once; the orchestrator ignores results for
// attempts that are not current and duplicates of results it applied.
//
// # Pools
//
// A worker claims only dispatches of the handlers it offers (Config.Handlers)
// and commits the others unclaimed: they belong to another pool. Workers
// offering the same set of handlers share a consumer group (GroupFor:
// DefaultGroup for the built-ins) and split task.dispatch's partitions;
// each other set is a group of its own, which sees every dispatch. So
// workers of different handler sets run side by side, each task on a
// worker that offers its handler, and a task no live worker offers waits,
// queued, until one does.
//
// # Heartbeats
//
// The worker refreshes the claim of each in-flight attempt every
// Config.HeartbeatInterval, and at least three times per the attempt's own
// heartbeat timeout (the claim's TTL), so a node with a short
// heartbeat_timeout keeps its live claim whatever the interval. The same
// script reports when the orchestrator cancelled
// the attempt or moved on to another one; the worker then cancels the
// handler's context and publishes nothing for that attempt.
//
// # Shutdown
//
// When the context given to Run ends, the worker stops fetching and leaves
// the consumer group (other workers take over its partitions), lets
// in-flight attempts finish for up to Config.DrainTimeout, then cancels the
// rest and releases their claims so that the reconciler dispatches them
// again, publishes the results it has, removes its registry entry and closes
// its producer.
package worker
