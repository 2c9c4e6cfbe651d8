package core

import "encoding/json"

// Event is something that happened to a run. Every event carries Now, the
// time (Unix ms) at which the shell handles it.
type Event interface{ at() int64 }

// Start begins a run created by NewRun.
type Start struct {
	Now int64
	// NoSlot says the run's workflow has a concurrency cap and the shell
	// got no slot for it: the run is recorded held (pending) until Admit.
	NoSlot bool
}

// ResultStatus is what a worker reports about an attempt.
type ResultStatus int

// Result statuses.
const (
	ResultRunning ResultStatus = iota + 1
	ResultSucceeded
	ResultFailed
)

// Result is a worker's report about one attempt.
type Result struct {
	Now       int64
	Node      string
	Instance  int
	Attempt   int
	Status    ResultStatus
	Output    json.RawMessage
	Error     string
	Permanent bool
	// HandedBack marks a failed result of an attempt its worker gave back
	// unfinished at shutdown: the attempt is dispatched again, uncounted.
	HandedBack bool
	Worker     string
	StartedAt  int64
	FinishedAt int64
}

// TimerKind says what a durable timer is for.
type TimerKind int

// Timer kinds.
const (
	TimerRetry TimerKind = iota + 1
	TimerDeadline
	TimerRunDeadline
	// TimerWake ends the sleep of a built-in wait node.
	TimerWake
)

// Timer is a durable timer that came due.
type Timer struct {
	Now      int64
	Kind     TimerKind
	Node     string
	Instance int
	Attempt  int
}

// ControlAction is a user's request to change a run's course.
type ControlAction int

// Control actions.
const (
	ControlCancel ControlAction = iota + 1
	ControlRetry
	ControlRerunFrom
	ControlPause
	ControlResume
	// ControlApprove and ControlReject decide a built-in approval node.
	ControlApprove
	ControlReject
)

// Control is a user's request.
type Control struct {
	Now    int64
	Action ControlAction
	Node   string
	Reason string
	// By names who asked (an API key's name); approvals record it.
	By string
	// NoSlot is set by the shell on a retry or rerun that reopens a finished
	// run of a workflow with a concurrency cap when no slot is free: the
	// run's nodes are reset, but the run waits held (pending) until Admit,
	// as a new run would.
	NoSlot bool
}

// Admit starts a run that Hold recorded, now that it has a workflow
// concurrency slot.
type Admit struct{ Now int64 }

func (e Start) at() int64   { return e.Now }
func (e Admit) at() int64   { return e.Now }
func (e Result) at() int64  { return e.Now }
func (e Timer) at() int64   { return e.Now }
func (e Control) at() int64 { return e.Now }
