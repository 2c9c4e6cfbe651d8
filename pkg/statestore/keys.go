package statestore

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Prefix starts every key Braid writes.
const Prefix = "braid:"

// Keys builds every Redis key Braid uses. The zero value uses Prefix; tests
// set Namespace to isolate themselves on a shared server.
type Keys struct {
	// Namespace is inserted after Prefix, e.g. "t123:" (may be empty).
	Namespace string
	// Shards is the number of shards of the cross-run indexes (shards.go):
	// 0 or 1 for one key each, the names of a single server; more on a
	// Redis Cluster. Part of the data layout (CheckLayout).
	Shards int
}

func (k Keys) base() string { return Prefix + k.Namespace }

// runKey is braid:{run}:<suffix>; the braces are the Cluster hash tag.
func (k Keys) runKey(run, suffix string) string {
	return k.base() + "{" + run + "}:" + suffix
}

// Run is the run hash: workflow, version, status, input, times, error, seq.
func (k Keys) Run(run string) string { return k.runKey(run, "run") }

// RunPattern is a SCAN MATCH pattern for every key of one run (run ids
// never hold glob characters). For inspection tools such as the benchmarks'
// memory count; the engine itself always names its keys.
func (k Keys) RunPattern(run string) string { return k.runKey(run, "*") }

// Fence is the run's fencing counter, incremented on every lock acquisition.
func (k Keys) Fence(run string) string { return k.runKey(run, "fence") }

// Lock is the run's lock key (bsm/redislock's format; see lock.go).
func (k Keys) Lock(run string) string { return k.runKey(run, "lock") }

// Nodes is the hash of node records (field NodeField → records.NodeRecord JSON).
func (k Keys) Nodes(run string) string { return k.runKey(run, "nodes") }

// Outputs is the hash of node outputs (field NodeField → output JSON).
func (k Keys) Outputs(run string) string { return k.runKey(run, "out") }

// Instances is the hash of one fan-out node's instance records (field
// instance index → records.NodeRecord JSON).
func (k Keys) Instances(run, node string) string { return k.runKey(run, "inst:"+node) }

// InstanceOutputs is the hash of one fan-out node's instance outputs (field
// instance index → output JSON), kept for the API after the node assembled its
// output array.
func (k Keys) InstanceOutputs(run, node string) string { return k.runKey(run, "iout:"+node) }

// Items is the list of one foreach node's items (element i → item i as JSON).
func (k Keys) Items(run, node string) string { return k.runKey(run, "items:"+node) }

// History is the run's capped list of notable events (failed attempts, late or duplicate results).
func (k Keys) History(run string) string { return k.runKey(run, "hist") }

// Claim is the claim (and heartbeat) key of one attempt: value the holder
// (records.Holder: "<incarnation>/<worker id>"), TTL = heartbeat timeout.
func (k Keys) Claim(run, node string, inst, attempt int) string {
	return k.runKey(run, "claim:"+node+":"+strconv.Itoa(inst)+":"+strconv.Itoa(attempt))
}

// Logs is the capped list of log lines of one attempt.
func (k Keys) Logs(run, node string, inst, attempt int) string {
	return k.runKey(run, "logs:"+node+":"+strconv.Itoa(inst)+":"+strconv.Itoa(attempt))
}

// Blob holds an output too large to travel in an event.
func (k Keys) Blob(run, node string, inst, attempt int) string {
	return k.runKey(run, "blob:"+node+":"+strconv.Itoa(inst)+":"+strconv.Itoa(attempt))
}

// ActiveRunsOf is the active-runs index shard of run: the sorted set of
// run ids not yet ended, scored by creation time (ms), that the reconciler
// walks. ActiveRunShards lists every shard.
func (k Keys) ActiveRunsOf(run string) string { return k.shardKey(k.ShardOf(run), "runs:active") }

// ActiveRunShards lists the keys of every active-runs index shard.
func (k Keys) ActiveRunShards() []string { return k.allShards("runs:active") }

// BusyRunsOf is the busy-runs index shard of run: the sorted set of runs
// that may have attempts a worker holds (queued or running) or that wait
// for a concurrency slot, scored by creation time (ms). It is a subset of
// the active runs, kept by the orchestrator: a run joins it with its first
// dispatch and leaves it when it ends or a reconcile finds it idle (it
// waits on an approval or a timer). The reconciler walks it often and the
// active runs rarely, so that a worker's death is repaired within moments
// however many runs wait. BusyRunShards lists every shard.
func (k Keys) BusyRunsOf(run string) string { return k.shardKey(k.ShardOf(run), "runs:busy") }

// BusyRunShards lists the keys of every busy-runs index shard.
func (k Keys) BusyRunShards() []string { return k.allShards("runs:busy") }

// AllRunsOf is the all-runs index shard of run: every run id scored by
// creation time (ms). AllRunShards lists every shard.
func (k Keys) AllRunsOf(run string) string { return k.shardKey(k.ShardOf(run), "runs:all") }

// AllRunShards lists the keys of every all-runs index shard.
func (k Keys) AllRunShards() []string { return k.allShards("runs:all") }

// WorkflowRunsOf is the shard of workflow name's runs index holding run:
// the workflow's run ids scored by creation time (ms). Unsharded it is
// braid:wf:{name}:runs, in the workflow's slot.
func (k Keys) WorkflowRunsOf(name, run string) string {
	if !k.Sharded() {
		return k.base() + "wf:{" + name + "}:runs"
	}
	return k.shardKey(k.ShardOf(run), "wf:"+name+":runs")
}

// WorkflowRunShards lists the keys of every shard of workflow name's runs index.
func (k Keys) WorkflowRunShards(name string) []string {
	if !k.Sharded() {
		return []string{k.WorkflowRunsOf(name, "")}
	}
	return k.allShards("wf:" + name + ":runs")
}

// TimersOf is the durable-timers shard of run's timers (member
// Timer.Member, score due time in ms). TimerShards lists every shard.
func (k Keys) TimersOf(run string) string { return k.shardKey(k.ShardOf(run), "timers") }

// TimerShards lists the keys of every durable-timers shard.
func (k Keys) TimerShards() []string { return k.allShards("timers") }

// Workflows is the sorted set of registered workflow names scored by first registration (ms).
func (k Keys) Workflows() string { return k.base() + "workflows" }

// WorkflowVersions is the hash of one workflow's versions (field version number → definition JSON).
func (k Keys) WorkflowVersions(name string) string { return k.base() + "wf:{" + name + "}:versions" }

// WorkflowMeta is the hash of one workflow's metadata (latest, created, updated).
func (k Keys) WorkflowMeta(name string) string { return k.base() + "wf:{" + name + "}:meta" }

// Leader is the lease key of a cluster-wide duty ("maintenance", "scheduler").
func (k Keys) Leader(duty string) string { return k.base() + "leader:" + duty }

// scheduleKey is braid:{schedules}:<suffix>: every schedule key shares one
// Cluster slot, so a schedule and the indexes it is in change in one script.
func (k Keys) scheduleKey(suffix string) string { return k.base() + "{schedules}:" + suffix }

// Schedule is one schedule's hash: its definition (JSON) and firing state.
func (k Keys) Schedule(id string) string { return k.scheduleKey("s:" + id) }

// Schedules is the sorted set of schedule ids scored by creation time (ms).
func (k Keys) Schedules() string { return k.scheduleKey("index") }

// ScheduleDue is the sorted set of enabled schedule ids scored by their next fire time (ms).
func (k Keys) ScheduleDue() string { return k.scheduleKey("due") }

// Workers is the hash of live workers (field worker id → JSON status).
func (k Keys) Workers() string { return k.base() + "workers" }

// WorkerLive is one worker id's liveness key: value the incarnation (one
// per process start) that is alive under that id, TTL the worker's
// liveness timeout, renewed several times per TTL. A claim whose holder's
// incarnation is not the one stored here belongs to a worker that is gone.
func (k Keys) WorkerLive(id string) string { return k.base() + "live:" + id }

// WorkerChannel is the pub/sub channel on which a worker announces that it
// started (message: its worker id), so that the maintenance leader
// reconciles at once what a killed predecessor under the same id left
// behind. Delivery is best effort: the periodic pass covers a lost one.
func (k Keys) WorkerChannel() string { return k.base() + "workers:started" }

// Idempotency is the key remembering one Idempotency-Key sent to start a run
// of workflow (value: whatever the api stored, e.g. the run id). The client's
// key is hashed, so any bytes are safe and the key length is fixed.
func (k Keys) Idempotency(workflow, key string) string {
	sum := sha256.Sum256([]byte(key))
	return k.base() + "idem:{" + workflow + "}:" + hex.EncodeToString(sum[:16])
}

// wfKey is braid:wf:{<name>}:<suffix>, like WorkflowRuns: one workflow's
// keys share a Cluster slot.
func (k Keys) wfKey(workflow, suffix string) string {
	return k.base() + "wf:{" + workflow + "}:" + suffix
}

// AdmitQueue is the sorted set of runs of a workflow with a concurrency cap
// that wait for a slot, scored by request time (ms): FIFO admission.
func (k Keys) AdmitQueue(workflow string) string { return k.wfKey(workflow, "admitq") }

// AdmitActive is the set of admitted, unfinished runs of a capped workflow.
func (k Keys) AdmitActive(workflow string) string { return k.wfKey(workflow, "admitted") }

// InstanceField is the field of fan-out instance idx in the Instances and
// InstanceOutputs hashes.
func InstanceField(idx int) string { return strconv.Itoa(idx) }

// StopChannel is the pub/sub channel on which the orchestrator announces
// runs whose in-flight attempts it stopped (cancel, run timeout), so that
// workers check those attempts' claims at once instead of at their next
// heartbeat. Messages are run ids; delivery is best effort.
func (k Keys) StopChannel() string { return k.base() + "stop" }

// EndedChannel is the pub/sub channel on which the orchestrator announces
// runs that reached a terminal status, in the pipeline of the write that
// ended them, so that api requests waiting for a run (?wait=) answer at
// once. A message is the run id, then the run as stored right after that
// write unless it is large (QueueEnded, ParseEnded); delivery is best
// effort.
func (k Keys) EndedChannel() string { return k.base() + "ended" }
