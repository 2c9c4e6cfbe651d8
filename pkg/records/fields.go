package records

// Run hash field names: the stored run's own fields (the hash
// statestore.Keys.Run), read by the api, written by the orchestrator.
const (
	FieldWorkflow    = "wf"
	FieldVersion     = "ver"
	FieldStatus      = "status"
	FieldInput       = "input"
	FieldCreated     = "created"
	FieldStarted     = "started"
	FieldFinished    = "finished"
	FieldError       = "error"
	FieldSeq         = "seq"
	FieldPaused      = "paused"
	FieldHeld        = "held" // "1" while the run waits for a workflow concurrency slot
	FieldRequestedBy = "by"
	FieldTrace       = "tp" // the W3C traceparent of the request that started the run, when traced
)
