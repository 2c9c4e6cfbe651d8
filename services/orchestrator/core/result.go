package core

import (
	"fmt"
	"hash/fnv"

	"github.com/braidhq/braid/pkg/records"
)

// result applies a worker's report about one attempt.
func (r *Run) result(e Result, eff *Effects) {
	i := r.Index(e.Node)
	if i >= 0 && r.Nodes[i].FanOut {
		r.instanceResult(i, e, eff)
		return
	}
	if i < 0 || e.Instance != 0 {
		eff.History = append(eff.History, fmt.Sprintf("result for unknown node %s#%d ignored", e.Node, e.Instance))
		return
	}
	n := &r.Nodes[i]
	if n.Attempt != e.Attempt || !n.State.InFlight() {
		if e.Status != ResultRunning {
			eff.History = append(eff.History, fmt.Sprintf("late or duplicate result for node %s attempt %d (current attempt %d, %s) ignored",
				e.Node, e.Attempt, n.Attempt, n.State))
		}
		return
	}
	n.Worker = e.Worker
	if e.StartedAt > 0 {
		n.StartedAt = e.StartedAt
	}
	switch e.Status {
	case ResultRunning:
		if n.State == records.NodeQueued {
			r.transition(i, records.NodeRunning, "", e.Now, eff)
		}
	case ResultSucceeded:
		r.succeed(i, e, eff)
	case ResultFailed:
		if e.HandedBack && r.dispatching() {
			r.handBack(i, e, eff)
			return
		}
		r.attemptFailed(i, e.Error, e.Permanent, e.Now, eff)
	}
}

func (r *Run) succeed(i int, e Result, eff *Effects) {
	n := &r.Nodes[i]
	n.FinishedAt, n.Error, n.Deadline = orNow(e.FinishedAt, e.Now), "", 0
	if n.StartedAt == 0 {
		n.StartedAt = n.FinishedAt
	}
	r.Outputs[i] = orNull(e.Output)
	eff.setOutput(i)
	r.transition(i, records.NodeSucceeded, "", e.Now, eff)
	r.evaluate(r.finished(i, e.Now, eff, nil), e.Now, eff)
	r.maybeFinish(e.Now, eff)
}

// attemptFailed retries node i if its policy allows, else fails it.
func (r *Run) attemptFailed(i int, msg string, permanent bool, now int64, eff *Effects) {
	n := &r.Nodes[i]
	node := r.Plan.Graph.Def.Nodes[i]
	n.Error, n.Deadline = msg, 0
	eff.History = append(eff.History, fmt.Sprintf("node %s attempt %d failed: %s", node.ID, n.Attempt, msg))
	if !permanent && n.Attempt < n.MaxAttempt(node.Retry.Attempts()) && r.Status == records.RunRunning {
		n.EndRun(records.OutcomeFailed, msg, now)
		delay := node.Retry.Delay(n.Attempt-n.AttemptBase, jitter(r.ID, node.ID, n.Attempt)) // the backoff restarts with a reset's budget
		n.RetryAt = now + delay.Milliseconds()
		r.transition(i, records.NodeRetryWait, fmt.Sprintf("attempt %d failed: %s; retry at %d", n.Attempt, msg, n.RetryAt), now, eff)
		eff.Timers = append(eff.Timers, TimerArm{Kind: TimerRetry, Node: node.ID, Attempt: n.Attempt, At: n.RetryAt})
		return
	}
	n.FinishedAt = now
	r.transition(i, records.NodeFailed, msg, now, eff)
	r.evaluate(r.finished(i, now, eff, nil), now, eff)
	r.maybeFinish(now, eff)
}

// jitter is a deterministic number in [0,1) per attempt, so that the core
// stays pure and replays identically.
func jitter(run, node string, attempt int) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s/%d", run, node, attempt)
	return float64(h.Sum64()>>11) / (1 << 53)
}

func orNow(t, now int64) int64 {
	if t > 0 {
		return t
	}
	return now
}
