// Package apisvc is Braid's REST API (SPEC §8): workflow registration and
// validation, run creation with idempotency keys, run, task, log and worker
// queries, run control (cancel, retry, rerun-from, pause, resume, approve,
// reject), live run events as server-sent events, health, readiness,
// Prometheus metrics and the OpenAPI document every handler is tested
// against.
//
// The api writes a run's pending record and then publishes RunStartRequested
// on workflow.start; control requests go to workflow.control as RunControl.
// Everything else is read from Redis through statestore.Keys. One background
// consumer per process tails workflow.events (its own consumer group, so
// every api instance sees every event) and fans events out in memory to the
// SSE subscribers of each run.
//
// Errors are RFC 9457 problem+json documents produced in one place
// (problem_map.go); handlers return typed errors with c.Error. Every endpoint
// but /healthz, /readyz, /metrics and /openapi.json needs an API key
// (X-API-Key or Authorization: Bearer); keys are compared in constant time and
// never logged.
//
// New builds a Server (call Close when done) whose Handler can be mounted
// anywhere; Run serves it on Config.Addr until its context ends and shuts it
// down gracefully.
package apisvc
