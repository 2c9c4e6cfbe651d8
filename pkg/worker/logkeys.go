package worker

// slog attribute keys used by the runtime. Configs are never logged: they can
// hold secrets. Only ids, handler names and errors are.
const (
	keyComponent = "component"
	keyWorker    = "worker_id"
	keyRun       = "run_id"
	keyNode      = "node_id"
	keyInstance  = "instance"
	keyAttempt   = "attempt"
	keyHandler   = "handler"
	keyErr       = "err"
)
