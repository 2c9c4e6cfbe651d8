package core

import (
	"encoding/json"
	"fmt"

	"github.com/braidhq/braid/pkg/records"
)

// Run is the in-memory state of one run. Apply mutates it in place; if the
// caller cannot persist the resulting Effects it must discard the Run and
// load it again.
type Run struct {
	ID       string
	Workflow string
	Version  int
	Plan     *Plan
	Status   records.RunStatus
	// Input is the run input as a JSON object, defaults applied.
	Input      json.RawMessage
	CreatedAt  int64
	StartedAt  int64
	FinishedAt int64
	Error      string
	Paused     bool
	// Held marks a recorded run waiting for a workflow concurrency slot.
	Held bool
	// Seq numbers the run's events on workflow.events.
	Seq uint64
	// Nodes and Outputs are indexed by node position in the definition.
	Nodes   []records.NodeRecord
	Outputs []json.RawMessage

	counts     []parentCounts
	fans       map[int]*fan // launched fan-out nodes that have not succeeded
	unfinished int          // nodes not in a terminal state
	failed     int          // nodes in state failed
}

// NewRun builds the initial state of a run: every node pending with its
// parent counter set. Call Apply with a Start event to begin it. If the input
// does not fit the workflow's inputs, NewRun returns the run together with
// the error; record it with Reject.
func NewRun(id string, version int, plan *Plan, input json.RawMessage, now int64) (*Run, error) {
	in, inErr := plan.applyInputDefaults(input)
	if inErr != nil {
		in = input
	}
	g := plan.Graph
	r := &Run{
		ID: id, Workflow: g.Def.Name, Version: version, Plan: plan,
		Status: records.RunPending, Input: in, CreatedAt: now,
		Nodes:   make([]records.NodeRecord, len(g.Def.Nodes)),
		Outputs: make([]json.RawMessage, len(g.Def.Nodes)),
	}
	for i := range r.Nodes {
		r.Nodes[i] = InitialRecord(plan, i)
	}
	r.recount()
	if inErr != nil {
		return r, fmt.Errorf("run %s input: %w", id, inErr)
	}
	return r, nil
}

// Begin creates a run from its start request and takes its first step:
// rejected (failed, every node cancelled) when input does not fit the
// workflow's inputs, held when start.NoSlot (see Start), started otherwise.
// A rejected run is returned with the reason as the error.
func Begin(id string, version int, plan *Plan, input json.RawMessage, created int64, start Start, eff *Effects) (*Run, error) {
	r, err := NewRun(id, version, plan, input, created)
	if err != nil {
		r.Reject(err.Error(), start.Now, eff)
		return r, err
	}
	r.Apply(start, eff)
	return r, nil
}

// InitialRecord is node i's record in a new run: pending, every parent
// left. A started run stores only the records that changed since (Start
// writes the ones it changed), so a node without a stored record has this
// one.
func InitialRecord(plan *Plan, i int) records.NodeRecord {
	return records.NodeRecord{State: records.NodePending, ParentsLeft: len(plan.Graph.Parents[i])}
}

// Restore rebuilds a Run from stored parts (the shell's load path).
func Restore(id string, version int, plan *Plan, nodes []records.NodeRecord, outputs []json.RawMessage) *Run {
	r := &Run{ID: id, Workflow: plan.Graph.Def.Name, Version: version, Plan: plan, Nodes: nodes, Outputs: outputs}
	r.recount()
	return r
}

// recount derives the counters kept alongside the node records.
func (r *Run) recount() {
	r.countParents()
	r.unfinished, r.failed = 0, 0
	for _, n := range r.Nodes {
		if !n.State.Terminal() {
			r.unfinished++
		}
		if n.State == records.NodeFailed {
			r.failed++
		}
	}
}

// NodeID returns the id of the node at position i.
func (r *Run) NodeID(i int) string { return r.Plan.Graph.Def.Nodes[i].ID }

// Index returns the position of node id, or -1.
func (r *Run) Index(id string) int {
	i, ok := r.Plan.Graph.Index[id]
	if !ok {
		return -1
	}
	return i
}

// Unfinished returns how many nodes are not in a terminal state.
func (r *Run) Unfinished() int { return r.unfinished }
