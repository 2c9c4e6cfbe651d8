package core

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/template"
)

// fanAdvance starts instances of fan-out node i up to its concurrency and
// finishes the node once every instance is terminal. It reports whether the
// node finished; the caller propagates that to its children.
func (r *Run) fanAdvance(i int, now int64, eff *Effects) bool {
	n, f := &r.Nodes[i], r.fans[i]
	limit := r.fanCap(i)
	for n.Active < limit && r.dispatching() {
		idx := -1
		switch {
		case len(f.retry) > 0:
			idx, f.retry = f.retry[0], f.retry[1:]
		case n.Next < n.Count:
			idx = n.Next
			n.Next++
		}
		if idx < 0 {
			break
		}
		r.startInstance(i, idx, now, eff)
	}
	if n.Done() < n.Count || n.State.Terminal() {
		return false
	}
	r.fanFinish(i, now, eff)
	return true
}

// startInstance queues the next attempt of instance idx of node i. An
// instance whose config cannot be resolved fails at once, without retries.
func (r *Run) startInstance(i, idx int, now int64, eff *Effects) {
	f, n := r.fans[i], &r.Nodes[i]
	rec := f.insts[idx]
	if rec == nil { // its first attempt in this launch: numbered on from the earlier launches'
		rec = &records.NodeRecord{State: records.NodePending, Attempt: n.InstanceBase, AttemptBase: n.InstanceBase}
		f.insts[idx] = rec
	}
	rec.Attempt++
	n.InstanceHigh = max(n.InstanceHigh, rec.Attempt) // written with the node record instTransition touches
	rec.QueuedAt, rec.StartedAt, rec.FinishedAt, rec.Worker, rec.RetryAt, rec.Deadline, rec.Lost = now, 0, 0, "", 0, 0, 0
	cfg, err := r.instanceConfig(i, idx)
	if err != nil {
		r.instanceFailed(i, idx, err.Error(), now, eff)
		return
	}
	node := r.Plan.Graph.Def.Nodes[i]
	if node.Timeout > 0 {
		rec.Deadline = now + ms(node.Timeout) + DeadlineGrace.Milliseconds()
		eff.Timers = append(eff.Timers, TimerArm{Kind: TimerDeadline, Node: node.ID, Instance: idx, Attempt: rec.Attempt, At: rec.Deadline})
	}
	r.instTransition(i, idx, records.NodeQueued, "", now, eff)
	eff.Dispatches = append(eff.Dispatches, r.instanceDispatch(i, idx, cfg))
}

// instanceDispatch builds the dispatch of instance idx's current attempt.
func (r *Run) instanceDispatch(i, idx int, cfg resolved) Dispatch {
	d := r.dispatchOf(i, cfg)
	d.Instance, d.Count, d.Attempt = idx, r.Nodes[i].Count, r.fans[i].insts[idx].Attempt
	d.IdempotencyKey = IdempotencyKey(r.ID, r.NodeID(i), idx, d.Attempt)
	return d
}

// instanceConfig resolves node i's config for instance idx, with `index`,
// `count` and (foreach) `item` in scope.
func (r *Run) instanceConfig(i, idx int) (resolved, error) {
	f := r.fans[i]
	if !r.Plan.nodes[i].hasTmpl {
		return resolved{config: orNull(r.Plan.Graph.Def.Nodes[i].Config)}, nil
	}
	if f.scope == nil {
		f.scope = r.scope(r.Plan.Graph.Refs[i], decodeJSON)
	}
	s := make(template.MapScope, len(f.scope)+3)
	for k, v := range f.scope {
		s[k] = v
	}
	s["index"], s["count"] = json.Number(strconv.Itoa(idx)), json.Number(strconv.Itoa(r.Nodes[i].Count))
	if f.items != nil {
		s["item"] = decodeJSON(f.items[idx])
	}
	cfg, err := r.resolveIn(i, s)
	if err != nil {
		return resolved{}, fmt.Errorf("instance %d: %w", idx, err)
	}
	return cfg, nil
}

// instTransition moves instance idx of node i to state s, keeping the node's
// tallies and recording the change.
func (r *Run) instTransition(i, idx int, s records.NodeState, detail string, now int64, eff *Effects) {
	n, rec := &r.Nodes[i], r.fans[i].insts[idx]
	tally(&n.FanOutCounts, rec.State, -1)
	tally(&n.FanOutCounts, s, +1)
	rec.State = s
	slot := Slot{Node: i, Instance: idx}
	eff.FanOut.setInstance(slot, *rec)
	r.touch(i, eff)
	eff.Changes = append(eff.Changes, Change{Node: i, Instance: idx, FanOut: true, Attempt: rec.Attempt, State: s, Detail: detail, Worker: rec.Worker, At: now})
	if s == records.NodeSucceeded {
		delete(r.fans[i].insts, idx)
	}
}

// tally adds d to the counter that state s belongs to.
func tally(c *records.FanOutCounts, s records.NodeState, d int) {
	switch s {
	case records.NodeQueued, records.NodeRunning, records.NodeRetryWait:
		c.Active += d
	case records.NodeSucceeded:
		c.Succeeded += d
	case records.NodeFailed:
		c.Failed += d
	case records.NodeCancelled:
		c.Cancelled += d
	}
}

// instanceResult applies a worker's report about one fan-out instance.
func (r *Run) instanceResult(i int, e Result, eff *Effects) {
	f := r.fans[i]
	var rec *records.NodeRecord
	if f != nil && r.Nodes[i].State == records.NodeRunning {
		rec = f.insts[e.Instance]
	}
	if rec == nil || rec.Attempt != e.Attempt || !rec.State.InFlight() {
		if e.Status != ResultRunning {
			eff.History = append(eff.History, fmt.Sprintf("late or duplicate result for node %s instance %d attempt %d ignored", e.Node, e.Instance, e.Attempt))
		}
		return
	}
	rec.Worker = e.Worker
	if e.StartedAt > 0 {
		rec.StartedAt = e.StartedAt
	}
	switch e.Status {
	case ResultRunning:
		if rec.State == records.NodeQueued {
			r.instTransition(i, e.Instance, records.NodeRunning, "", e.Now, eff)
		}
		return
	case ResultSucceeded:
		rec.FinishedAt, rec.Error, rec.Deadline = orNow(e.FinishedAt, e.Now), "", 0
		if rec.StartedAt == 0 {
			rec.StartedAt = rec.FinishedAt
		}
		out := orNull(e.Output)
		f.outputs[e.Instance] = out
		eff.FanOut.setOutput(Slot{Node: i, Instance: e.Instance}, out)
		r.instTransition(i, e.Instance, records.NodeSucceeded, "", e.Now, eff)
	case ResultFailed:
		if e.HandedBack && r.dispatching() {
			r.instanceHandBack(i, e.Instance, e, eff)
			return
		}
		if !r.instanceAttemptFailed(i, e.Instance, e.Error, e.Permanent, e.Now, eff) {
			return
		}
	}
	if r.fanAdvance(i, e.Now, eff) {
		r.nodeDone(i, e.Now, eff)
	}
}

// instanceAttemptFailed retries instance idx if the node's policy allows,
// else fails it. It reports whether the instance is now terminal.
func (r *Run) instanceAttemptFailed(i, idx int, msg string, permanent bool, now int64, eff *Effects) bool {
	rec := r.fans[i].insts[idx]
	node := r.Plan.Graph.Def.Nodes[i]
	rec.Error, rec.Deadline = msg, 0
	eff.History = append(eff.History, fmt.Sprintf("node %s instance %d attempt %d failed: %s", node.ID, idx, rec.Attempt, msg))
	if !permanent && rec.Attempt < rec.MaxAttempt(node.Retry.Attempts()) && r.Status == records.RunRunning {
		rec.EndRun(records.OutcomeFailed, msg, now)
		delay := node.Retry.Delay(rec.Attempt-rec.AttemptBase, jitter(r.ID, node.ID+"#"+strconv.Itoa(idx), rec.Attempt))
		rec.RetryAt = now + delay.Milliseconds()
		r.instTransition(i, idx, records.NodeRetryWait, fmt.Sprintf("attempt %d failed: %s; retry at %d", rec.Attempt, msg, rec.RetryAt), now, eff)
		eff.Timers = append(eff.Timers, TimerArm{Kind: TimerRetry, Node: node.ID, Instance: idx, Attempt: rec.Attempt, At: rec.RetryAt})
		return false
	}
	r.instanceFailed(i, idx, msg, now, eff)
	return true
}

// instanceFailed moves instance idx to failed; the node remembers the first failure.
func (r *Run) instanceFailed(i, idx int, msg string, now int64, eff *Effects) {
	rec, n := r.fans[i].insts[idx], &r.Nodes[i]
	rec.Error, rec.FinishedAt, rec.Deadline = msg, now, 0
	if n.Error == "" {
		n.Error = fmt.Sprintf("instance %d: %s", idx, msg)
	}
	r.instTransition(i, idx, records.NodeFailed, msg, now, eff)
}

// fanFinish ends fan-out node i, every instance being terminal: succeeded
// with the array of instance outputs in index order, else failed.
func (r *Run) fanFinish(i int, now int64, eff *Effects) {
	n, f := &r.Nodes[i], r.fans[i]
	n.FinishedAt = now
	if n.Failed+n.Cancelled > 0 {
		n.Error = fmt.Sprintf("%d of %d instances failed (%d cancelled); first: %s", n.Failed+n.Cancelled, n.Count, n.Cancelled, n.Error)
		r.transition(i, records.NodeFailed, n.Error, now, eff)
		return
	}
	n.Error = ""
	r.Outputs[i] = assemble(f.outputs)
	eff.setOutput(i)
	delete(r.fans, i)
	r.transition(i, records.NodeSucceeded, "", now, eff)
}

// assemble joins instance outputs into one JSON array, once per node.
func assemble(outs []json.RawMessage) json.RawMessage {
	size := 2
	for _, o := range outs {
		size += len(o) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for k, o := range outs {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, orNull(o)...)
	}
	return append(b, ']')
}

// nodeDone propagates node i's terminal state and ends the run if nothing is left.
func (r *Run) nodeDone(i int, now int64, eff *Effects) {
	r.evaluate(r.finished(i, now, eff, nil), now, eff)
	r.maybeFinish(now, eff)
}

// instanceTimer handles a due retry or deadline timer of one instance.
func (r *Run) instanceTimer(i int, e Timer, eff *Effects) {
	f := r.fans[i]
	if f == nil || r.Nodes[i].State != records.NodeRunning {
		return
	}
	rec := f.insts[e.Instance]
	if rec == nil || rec.Attempt != e.Attempt {
		return
	}
	switch {
	case e.Kind == TimerRetry && rec.State == records.NodeRetryWait:
		if !r.dispatching() {
			return // a paused run re-queues on resume
		}
		r.startInstance(i, e.Instance, e.Now, eff)
	case e.Kind == TimerDeadline && rec.State.InFlight() && e.Now >= rec.Deadline:
		t := r.Plan.Graph.Def.Nodes[i].Timeout
		if !r.instanceAttemptFailed(i, e.Instance, fmt.Sprintf("timed out after %s (no result from the worker)", t), false, e.Now, eff) {
			return
		}
	default:
		return
	}
	if r.fanAdvance(i, e.Now, eff) {
		r.nodeDone(i, e.Now, eff)
	}
}
