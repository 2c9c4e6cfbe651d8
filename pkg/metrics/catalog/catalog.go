// Package catalog lists every Prometheus metric family Braid's services
// register: name, type, labels, meaning and the services that serve it.
// It is the one list the services build their collectors from
// (pkg/metrics), the e2e suite scrapes against, the label lint checks, and
// deploy/check holds the dashboard and the alert rules to. It imports only
// the standard library, so deploy/check can read it cheaply.
package catalog

import "slices"

// Type is a metric family's Prometheus type.
type Type string

// The family types Braid uses.
const (
	Counter   Type = "counter"
	Gauge     Type = "gauge"
	Histogram Type = "histogram"
)

// The services that serve metrics.
const (
	API          = "api"
	Orchestrator = "orchestrator"
	Worker       = "worker"
)

// Family is one metric family.
type Family struct {
	// Name is the family name (a histogram's base name, without _bucket,
	// _sum or _count).
	Name string
	// Type is counter, gauge or histogram.
	Type Type
	// Labels are the family's label names, in order; each is in Labels'
	// allowlist (AllowedLabels).
	Labels []string
	// Help is the family's HELP text.
	Help string
	// Services are the services that register it.
	Services []string
}

// In reports whether service registers f.
func (f Family) In(service string) bool { return slices.Contains(f.Services, service) }

var (
	all    = []string{API, Orchestrator, Worker}
	api    = []string{API}
	orch   = []string{Orchestrator}
	worker = []string{Worker}
)

// The families. Each service builds its collectors from these values.
var (
	// api
	HTTPRequests        = Family{"braid_http_requests_total", Counter, []string{"route", "method", "code"}, "HTTP requests served, by route pattern, method and status code.", api}
	HTTPRequestDuration = Family{"braid_http_request_duration_seconds", Histogram, []string{"route", "method"}, "HTTP request latency, by route pattern and method.", api}
	RunsCreated         = Family{"braid_runs_created_total", Counter, nil, "Runs accepted by POST /workflows/{name}/runs (idempotent replays excluded).", api}
	SSEClients          = Family{"braid_sse_clients", Gauge, nil, "Open server-sent event streams (run events and followed logs).", api}
	APIWaiting          = Family{"braid_api_waiting_requests", Gauge, nil, "Requests waiting for a run to end (?wait= on POST /workflows/{name}/runs and GET /runs/{id}).", api}
	APILimited          = Family{"braid_api_limited_total", Counter, []string{"limit"}, "Requests refused with a 429, by the limit they hit: rate (per-client requests/s), streams or waiters (per client at once).", api}

	// orchestrator
	RunsStarted     = Family{"braid_runs_started_total", Counter, []string{"workflow"}, "Runs that began running: a first start, a held run admitted to its workflow's concurrency slot, or a finished run reopened by retry or rerun.", orch}
	RunsEnded       = Family{"braid_runs_ended_total", Counter, []string{"workflow", "outcome"}, "Runs that ended, by workflow and outcome (succeeded, failed, cancelled).", orch}
	StaleWrites     = Family{"braid_orchestrator_stale_writes_total", Counter, nil, "State writes the per-run fence refused because another orchestrator took the run's lock.", orch}
	WorkersLost     = Family{"braid_orchestrator_workers_lost_total", Counter, nil, "Registered workers found dead: their liveness lapsed without a graceful stop.", orch}
	AttemptsLost    = Family{"braid_orchestrator_attempts_lost_total", Counter, nil, "Attempts lost with their worker and dispatched again without consuming a retry.", orch}
	RunsPruned      = Family{"braid_orchestrator_runs_pruned_total", Counter, nil, "Ended runs deleted with every key of theirs once older than the run retention (BRAID_RUN_RETENTION).", orch}
	Reconciles      = Family{"braid_orchestrator_reconciles_total", Counter, []string{"pass"}, "RECONCILE controls the maintenance leader's passes published, by pass: busy (the runs with tasks queued or running or held for a slot; every BRAID_RECONCILE_EVERY and when a worker starts or dies) or active (every active run; every BRAID_RECONCILE_ALL_EVERY).", orch}
	LockTakeovers   = Family{"braid_orchestrator_lock_takeovers_total", Counter, nil, "Run locks this orchestrator took that another holder had held since it last held them (or that it never held): each starts a takeover repair of the run.", orch}
	Leader          = Family{"braid_orchestrator_leader", Gauge, []string{"duty"}, "1 while this orchestrator holds the lease of a cluster-wide duty (maintenance, scheduler), else 0.", orch}
	SchedulerFires  = Family{"braid_scheduler_fires_total", Counter, nil, "Schedule fires whose run was requested (a fire repeated after a crash counts again).", orch}
	SchedulerMisses = Family{"braid_scheduler_misses_total", Counter, []string{"reason"}, "Schedule fire times that started no run, by reason: overlap (the previous run was still active), late (earlier fire times dropped after downtime: only the latest runs), dropped (the workflow is gone).", orch}
	LiveWorkers     = Family{"braid_workers", Gauge, nil, "Registered workers whose liveness is current, as the maintenance leader last counted them (only the leader exports it).", orch}
	IndexedRuns     = Family{"braid_runs", Gauge, []string{"set"}, "Runs in each run index, as the maintenance leader last counted them (every BRAID_RECONCILE_EVERY; only the leader exports it): stored (every run kept, the ended ones until BRAID_RUN_RETENTION), active (not ended), busy (tasks queued or running, or held for a concurrency slot: the runs the frequent reconcile pass walks).", orch}

	// worker
	NodeAttempts      = Family{"braid_node_attempts_total", Counter, []string{"handler", "outcome"}, "Attempts a worker finished, by handler and outcome (succeeded, failed, timed_out, stopped, handed_back).", worker}
	DispatchesSkipped = Family{"braid_worker_dispatches_skipped_total", Counter, nil, "Dispatches a worker left unclaimed because it offers no handler of their name: they are another worker pool's.", worker}
	TaskQueueWait     = Family{"braid_task_queue_wait_seconds", Histogram, []string{"handler"}, "Time from a node's dispatch (queued by the orchestrator) to its handler's start on a worker, by handler.", worker}
	TaskDuration      = Family{"braid_task_duration_seconds", Histogram, []string{"handler"}, "Handler execution time of finished attempts, by handler.", worker}

	// every service
	ConsumerLag          = Family{"braid_consumer_lag", Gauge, []string{"topic", "partition"}, "Records of a partition behind the last one this process received (high watermark - offset - 1), by topic and partition, as of that record.", all}
	DLQRecords           = Family{"braid_dlq_records_total", Counter, []string{"topic"}, "Records published to a dead-letter topic, by the topic they came from.", all}
	RedisCommandDuration = Family{"braid_redis_command_duration_seconds", Histogram, []string{"command"}, "Redis round trips, by command name (pipeline: one whole pipeline).", all}
	RedisScriptDuration  = Family{"braid_redis_script_duration_seconds", Histogram, []string{"script"}, "Round trips of the calls running a Lua script (alone or in a pipeline), by script name.", all}
)

// Families is every family, in the order above.
var Families = []Family{
	HTTPRequests, HTTPRequestDuration, RunsCreated, SSEClients, APIWaiting, APILimited,
	RunsStarted, RunsEnded, StaleWrites, WorkersLost, AttemptsLost, RunsPruned, Reconciles, LockTakeovers, Leader, SchedulerFires, SchedulerMisses, LiveWorkers, IndexedRuns,
	NodeAttempts, DispatchesSkipped, TaskQueueWait, TaskDuration,
	ConsumerLag, DLQRecords, RedisCommandDuration, RedisScriptDuration,
}

// AllowedLabels are the only label names a Braid family may have: each has
// a bounded set of values (route patterns, not paths; handler and workflow
// names, which are registered, not per run; never run, node, worker or
// attempt ids, keys or user input).
var AllowedLabels = []string{
	"route", "method", "code", "limit", "workflow", "outcome", "duty", "reason", "handler",
	"topic", "partition", "command", "script", "pass", "set",
	// added by `braid dev`, which serves all services from one registry
	"service",
}

// Lookup returns the family named name (a histogram's base name, or one of
// its _bucket, _sum, _count series names).
func Lookup(name string) (Family, bool) {
	for _, f := range Families {
		if f.Name == name {
			return f, true
		}
		if f.Type == Histogram && (name == f.Name+"_bucket" || name == f.Name+"_sum" || name == f.Name+"_count") {
			return f, true
		}
	}
	return Family{}, false
}
