// Package logkey holds every slog attribute key Braid's services and CLI emit,
// so one meaning has one spelling across processes: a log query for run_id or
// worker_id finds the lines of the api, the orchestrator and the workers
// alike. Configs and payloads are never logged (they can hold secrets); ids,
// names, counts and errors are.
package logkey

// Ids of the things a line is about.
const (
	RunID          = "run_id"          // a run's id
	NodeID         = "node_id"         // a node's id within its workflow
	Instance       = "instance"        // a fan-out instance's index (0 for a plain node)
	Attempt        = "attempt"         // an attempt's number, from 1
	WorkerID       = "worker_id"       // a worker process's id
	OrchestratorID = "orchestrator_id" // an orchestrator process's id
	ScheduleID     = "schedule_id"     // a schedule's id
	Workflow       = "workflow"        // a workflow's name
	Version        = "version"         // a workflow's version
	Handler        = "handler"         // a task handler's name
	Component      = "component"       // the part of a process that logs (logger.With)
	Service        = "service"         // a service braid dev runs: api, orchestrator, worker
)

// Errors and why something happened.
const (
	Err    = "err"    // an error; never "error", so one query finds them all
	Reason = "reason" // why something was dropped or refused
	Detail = "detail" // free-text detail of an adjustment
	Panic  = "panic"  // a recovered panic's value
	Stack  = "stack"  // a recovered panic's stack
)

// Kafka.
const (
	Topic         = "topic"
	Partition     = "partition"
	Partitions    = "partitions" // how many partitions an operation covered
	Offset        = "offset"
	Group         = "group"          // a consumer group's name
	GroupInstance = "group_instance" // a static consumer group member's instance id
	Evicted       = "evicted"        // members evicted from a consumer group
	Messages      = "messages"       // messages in a batch
	Topics        = "topics"         // topic names, or topics with their layout
	Brokers       = "brokers"        // how many brokers the cluster's metadata lists
	Replicas      = "replicas"       // a topic's replication factor
	MinInsync     = "min_insync"     // a topic's min.insync.replicas (0: the brokers' default)
)

// The api's requests (the access log and the problem responses).
const (
	RequestID  = "request_id"
	Method     = "method"
	Route      = "route" // the matched route pattern, or "unmatched"
	Path       = "path"
	Status     = "status"      // an HTTP status or a task's outcome
	DurationMS = "duration_ms" // a request's duration in milliseconds
	KeyName    = "key_name"    // the name of the api key that made a request, never its secret
	Name       = "name"        // an api key's name (inside its LogValue group)
	Role       = "role"        // an api key's role (inside its LogValue group)
	Action     = "action"      // a control action: cancel, retry, pause, resume
)

// Retries, leases and timing.
const (
	Try          = "try"           // the number of a retried operation's try
	Backoff      = "backoff"       // the wait before the next try
	Duration     = "duration"      // how long a task ran (time.Duration)
	Took         = "took"          // how long a step of start-up took
	DrainTimeout = "drain_timeout" // how long a shutdown waits for in-flight work
	Window       = "window"        // how long something is waited for before giving up
	Lease        = "lease"         // a lease's name
	Pass         = "pass"          // a reconcile pass: busy or active runs
	Locks        = "locks"         // run locks held
	Member       = "member"        // a timer entry (run, node and due time)
	FireAt       = "fire_at"       // a schedule's fire time
	Repeated     = "repeated"      // a fire that had already been handled
	Cron         = "cron"          // a schedule's cron expression
	Enabled      = "enabled"       // whether a schedule is enabled
	MaxHold      = "max_hold"      // a failpoint's longest hold
	Paused       = "paused"        // how long the process was seen stopped (SIGSTOP) during a hold
)

// Counts and sizes.
const (
	Runs        = "runs"
	Results     = "results"
	Dispatches  = "dispatches"
	Handlers    = "handlers"
	Concurrency = "concurrency"
	InFlight    = "in_flight"
	Processes   = "processes"
	Bytes       = "bytes"
	Stats       = "stats"
	Outcome     = "outcome" // why an optimistic start fell back
)

// Process and start-up details.
const (
	Addr                = "addr" // a listener's address
	Step                = "step" // a start-up step
	Kafka               = "kafka"
	Redis               = "redis"
	DurableRedis        = "durable_redis"
	Claim               = "claim"    // the claim a dropped dispatch lost to
	Previous            = "previous" // the previous incarnation under this worker id
	Other               = "other"    // another live incarnation using this worker id
	Allow               = "allow"    // the egress allow list
	AllowLoopback       = "allow_loopback"
	OwnListenersRefused = "own_listeners_refused"
)
