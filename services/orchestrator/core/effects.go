package core

import (
	"encoding/json"
	"slices"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/template"
)

// Effects is what the shell must do after Apply: persist, then publish.
// Effects accumulate over several Apply calls of one batch.
type Effects struct {
	// RunChanged says the run's own fields (status, times, error, seq) changed.
	RunChanged bool
	// Created says the run was started in this batch (its record does not exist yet).
	Created bool
	// Nodes lists positions whose records changed (each at most once).
	Nodes []int
	// Outputs lists positions whose outputs were set (each at most once).
	Outputs []int
	// ClearedOutputs lists positions whose outputs were removed (rerun).
	ClearedOutputs []int
	// Dispatches are attempts to send to workers, after persisting.
	Dispatches []Dispatch
	// Timers are durable timers to arm.
	Timers []TimerArm
	// Changes are node transitions to publish on workflow.events.
	Changes []Change
	// History records notable events that did not change state (late results...).
	History []string
	// Orphans are claims of lost attempts, held by worker incarnations that
	// are gone: the write deletes each if it still holds that holder, so
	// that the attempt's new dispatch can be claimed.
	Orphans []OrphanClaim
	// Lost counts attempts declared lost with their worker (for metrics).
	Lost int
	// Started says the run began running in this batch: a first start, a
	// held run admitted, a finished run reopened (for metrics).
	Started bool
	// FanOut holds what changed in fan-out nodes' per-instance storage.
	FanOut FanOutEffects

	dirty   map[int]bool
	outSet  map[int]bool
	rChange bool // run status changed (publish run_status)
}

// RunStatusChanged reports whether the run's status changed in this batch.
func (e *Effects) RunStatusChanged() bool { return e.rChange }

// Empty reports whether there is nothing to persist or publish.
func (e *Effects) Empty() bool {
	return !e.RunChanged && len(e.Nodes) == 0 && len(e.Dispatches) == 0 && len(e.History) == 0 && len(e.Timers) == 0 &&
		len(e.Orphans) == 0 && e.FanOut.empty()
}

// Dispatch is one attempt to send to a worker.
type Dispatch struct {
	Node     int
	Instance int
	Count    int
	Attempt  int
	Handler  string
	Config   json.RawMessage
	// Secrets are the strings of Config the worker fills in with secrets.
	Secrets          []template.Slot
	IdempotencyKey   string
	TimeoutMs        int64
	HeartbeatTimeout int64
}

// OrphanClaim is the claim of a lost attempt, to delete if its value is
// still Holder.
type OrphanClaim struct {
	Node     int
	Instance int
	// FanOut marks an instance of a fan-out node (Instance is its index).
	FanOut  bool
	Attempt int
	Holder  string
}

// TimerArm is a durable timer to arm at At (Unix ms).
type TimerArm struct {
	Kind     TimerKind
	Node     string
	Instance int
	Attempt  int
	At       int64
}

// Change is one node transition.
type Change struct {
	Node     int
	Instance int
	// FanOut marks the change of one fan-out instance (Instance is its index).
	FanOut  bool
	Attempt int
	State   records.NodeState
	Detail  string
	Worker  string
	At      int64
}

// reserveAt is the size of work from which evaluate sizes the effects'
// lists before deciding it (reserve).
const reserveAt = 64

// reserve makes room for n more dispatches, changes and touched nodes: a
// node with many children (a fan-out's root) queues them all in one step,
// and growing these lists by doubling was about a tenth of the bytes a
// 10,000-node fan-out allocated. Room that stays unused (children that
// wait on other parents) lives as long as the batch.
func (e *Effects) reserve(n int) {
	e.Dispatches = slices.Grow(e.Dispatches, n)
	e.Changes = slices.Grow(e.Changes, n)
	e.Nodes = slices.Grow(e.Nodes, n)
	if e.dirty == nil {
		e.dirty = make(map[int]bool, n)
	}
}

func (e *Effects) touch(i int) {
	if e.dirty == nil {
		e.dirty = map[int]bool{}
	}
	if !e.dirty[i] {
		e.dirty[i] = true
		e.Nodes = append(e.Nodes, i)
	}
}

func (e *Effects) setOutput(i int) {
	if e.outSet == nil {
		e.outSet = map[int]bool{}
	}
	if !e.outSet[i] {
		e.outSet[i] = true
		e.Outputs = append(e.Outputs, i)
	}
}
