package core

import (
	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
)

// verdict is what a trigger rule says about a pending node.
type verdict int

const (
	wait verdict = iota
	fire
	skip
)

// parentCounts are the per-node tallies of finished parents that make trigger
// rules O(1) to evaluate. They are derived from parent states (never stored).
type parentCounts struct{ succeeded, failed, skipped int32 }

// countParents derives every node's parent tallies (load and reset paths).
func (r *Run) countParents() {
	g := r.Plan.Graph
	r.counts = make([]parentCounts, len(r.Nodes))
	for i := range r.Nodes {
		for _, p := range g.Parents[i] {
			r.counts[i].add(r.Nodes[p])
		}
	}
}

func (c *parentCounts) add(p records.NodeRecord) {
	switch {
	case p.State == records.NodeSucceeded:
		c.succeeded++
	case p.State == records.NodeFailed, p.State == records.NodeCancelled,
		p.State == records.NodeSkipped && p.UpstreamFailed:
		c.failed++
	case p.State == records.NodeSkipped:
		c.skipped++
	}
}

// decide applies node i's trigger rule to its finished parents.
func (r *Run) decide(i int) (v verdict, upstreamFailed bool) {
	total := int32(len(r.Plan.Graph.Parents[i]))
	if total == 0 {
		return fire, false
	}
	c := r.counts[i]
	done := r.Nodes[i].ParentsLeft == 0
	switch r.Plan.Graph.Def.Nodes[i].TriggerRule {
	case dag.TriggerAllDone:
		return when(done, fire, wait), false
	case dag.TriggerOneSuccess:
		if c.succeeded > 0 {
			return fire, false
		}
		return when(done, skip, wait), c.failed > 0
	case dag.TriggerOneFailed:
		if c.failed > 0 {
			return fire, false
		}
		return when(done, skip, wait), false
	case dag.TriggerNoneFailed:
		if c.failed > 0 {
			return skip, true
		}
		return when(done, fire, wait), false
	case dag.TriggerAllFailed:
		if c.succeeded > 0 || c.skipped > 0 {
			return skip, false
		}
		return when(done, fire, wait), false
	default: // all_success
		if c.failed > 0 {
			return skip, true
		}
		if c.skipped > 0 {
			return skip, false
		}
		return when(done, fire, wait), false
	}
}

func when(cond bool, a, b verdict) verdict {
	if cond {
		return a
	}
	return b
}

// evaluate decides every node in work (and every node their outcomes make
// decidable), iteratively so that long chains of skips cannot overflow the stack.
func (r *Run) evaluate(work []int, now int64, eff *Effects) {
	if len(work) >= reserveAt {
		eff.reserve(len(work))
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		if r.Nodes[i].State != records.NodePending || !r.dispatching() {
			continue
		}
		v, uf := r.decide(i)
		switch v {
		case skip:
			r.skipNode(i, uf, r.skipReason(i, uf), now, eff)
			work = r.finished(i, now, eff, work)
		case fire:
			if r.launch(i, now, eff) {
				work = r.finished(i, now, eff, work)
			}
		}
	}
}

// dispatching reports whether new work may start.
func (r *Run) dispatching() bool { return r.Status == records.RunRunning && !r.Paused }

// skipNode moves node i to skipped.
func (r *Run) skipNode(i int, upstreamFailed bool, reason string, now int64, eff *Effects) {
	n := &r.Nodes[i]
	n.UpstreamFailed, n.Reason, n.FinishedAt = upstreamFailed, reason, now
	r.transition(i, records.NodeSkipped, reason, now, eff)
}

// skipReason names the parents that made node i skip.
func (r *Run) skipReason(i int, upstreamFailed bool) string {
	for _, p := range r.Plan.Graph.Parents[i] {
		n := r.Nodes[p]
		switch {
		case upstreamFailed && (n.State == records.NodeFailed || n.State == records.NodeCancelled || n.UpstreamFailed):
			return "upstream failed: " + r.NodeID(p)
		case !upstreamFailed && n.State.Terminal():
			return "trigger rule " + string(r.rule(i)) + " not met (" + r.NodeID(p) + " " + string(n.State) + ")"
		}
	}
	return "trigger rule " + string(r.rule(i)) + " not met"
}

func (r *Run) rule(i int) dag.TriggerRule {
	if t := r.Plan.Graph.Def.Nodes[i].TriggerRule; t != "" {
		return t
	}
	return dag.TriggerAllSuccess
}

// finished propagates node i's terminal state to its children and returns
// work extended with the children that may now be decidable.
func (r *Run) finished(i int, now int64, eff *Effects, work []int) []int {
	for _, c := range r.Plan.Graph.Children[i] {
		child := &r.Nodes[c]
		child.ParentsLeft--
		r.counts[c].add(r.Nodes[i])
		r.touch(c, eff)
		if child.State == records.NodePending {
			work = append(work, c)
		}
	}
	return work
}
