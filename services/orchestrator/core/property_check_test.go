package core

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
)

// step applies ev, mirrors the effects into the simulated store and world,
// and checks every invariant.
func (s *sim) step(ev Event) error {
	eff := &Effects{}
	s.r.Apply(ev, eff)
	for _, i := range eff.Nodes {
		s.persisted[i] = s.r.Nodes[i]
	}
	for _, i := range eff.Outputs {
		s.outputs[i] = s.r.Outputs[i]
	}
	s.mirrorFanOut(&eff.FanOut)
	if !reflect.DeepEqual(s.persisted, s.r.Nodes) {
		return fmt.Errorf("after %T: a changed node record was not listed in Effects.Nodes", ev)
	}
	for _, d := range eff.Dispatches {
		if err := s.checkDispatch(d); err != nil {
			return err
		}
		s.inflight = append(s.inflight, d)
	}
	s.timers = append(s.timers, eff.Timers...)
	for _, c := range eff.Changes {
		if c.State == records.NodePending { // reset by a retry or rerun: it may end once more
			if c.FanOut {
				slot := Slot{Node: c.Node, Instance: c.Instance}
				delete(s.instTerm, slot)
				s.instBase[slot] = s.instances[slot].Attempt
			} else {
				s.terminal[c.Node] = 0
				// Attempts go on counting across a retry of the run (keys
				// stay unique); the policy bounds those since the reset.
				s.attemptBase[c.Node] = s.r.Nodes[c.Node].Attempt
			}
			continue
		}
		if c.FanOut {
			if c.State.Terminal() {
				slot := Slot{Node: c.Node, Instance: c.Instance}
				if s.instTerm[slot]++; s.instTerm[slot] > 1 {
					return fmt.Errorf("node %s instance %d reached a terminal state twice", s.r.NodeID(c.Node), c.Instance)
				}
			}
			continue
		}
		if c.State.Terminal() {
			s.terminal[c.Node]++
			if s.terminal[c.Node] > 1 {
				return fmt.Errorf("node %s reached a terminal state twice", s.r.NodeID(c.Node))
			}
		}
	}
	return s.checkState()
}

// checkDispatch verifies the dispatched node's trigger rule held, by an
// oracle independent of the core's counters.
func (s *sim) checkDispatch(d Dispatch) error {
	g := s.r.Plan.Graph
	id := s.r.NodeID(d.Node)
	// An attempt the orchestrator gave up on (timed out) may still be running
	// somewhere; a new dispatch must carry a higher attempt number.
	for _, f := range s.inflight {
		if f.Node == d.Node && f.Instance == d.Instance && f.Attempt >= d.Attempt {
			return fmt.Errorf("node %s attempt %d dispatched while attempt %d is in flight", id, d.Attempt, f.Attempt)
		}
	}
	// Attempt numbers never go back for a node instance, across retries and
	// reruns alike: a lower one would repeat an idempotency key.
	slot := Slot{Node: d.Node, Instance: d.Instance}
	if d.Attempt < s.lastAttempt[slot] {
		return fmt.Errorf("node %s instance %d dispatched as attempt %d after attempt %d: its idempotency key repeats", id, d.Instance, d.Attempt, s.lastAttempt[slot])
	}
	s.lastAttempt[slot] = d.Attempt
	var succ, failed, done int
	for _, p := range g.Parents[d.Node] {
		n := s.r.Nodes[p]
		if n.State.Terminal() {
			done++
		}
		if n.State == records.NodeSucceeded {
			succ++
		}
		// A cancelled parent counts as a failed one, as Airflow's
		// upstream_failed does: one_failed fires on it, none_failed and
		// all_success do not.
		if n.State == records.NodeFailed || n.State == records.NodeCancelled || n.State == records.NodeSkipped && n.UpstreamFailed {
			failed++
		}
	}
	total := len(g.Parents[d.Node])
	ok := map[dag.TriggerRule]bool{
		"": succ == total, dag.TriggerAllSuccess: succ == total, dag.TriggerAllDone: done == total,
		dag.TriggerOneSuccess: succ > 0, dag.TriggerOneFailed: failed > 0,
		dag.TriggerNoneFailed: done == total && failed == 0, dag.TriggerAllFailed: done == total && failed == total,
	}[g.Def.Nodes[d.Node].TriggerRule]
	if total > 0 && !ok {
		return fmt.Errorf("node %s dispatched before its trigger rule %q held", id, g.Def.Nodes[d.Node].TriggerRule)
	}
	if g.Def.Nodes[d.Node].When == "false" {
		return fmt.Errorf("node %s dispatched although its when is false", id)
	}
	return nil
}

// checkState verifies the derived counters and outputs.
func (s *sim) checkState() error {
	g := s.r.Plan.Graph
	for i, n := range s.r.Nodes {
		left := 0
		for _, p := range g.Parents[i] {
			if !s.r.Nodes[p].State.Terminal() {
				left++
			}
		}
		if n.ParentsLeft != left {
			return fmt.Errorf("node %s parents_left=%d, want %d", s.r.NodeID(i), n.ParentsLeft, left)
		}
		if limit := g.Def.Nodes[i].Retry.Attempts(); !n.FanOut && n.Attempt-s.attemptBase[i] > limit {
			return fmt.Errorf("node %s is on attempt %d of %d (counting from %d): a lost attempt consumed one, or a retry went past the policy", s.r.NodeID(i), n.Attempt, limit, s.attemptBase[i])
		}
		if n.Lost >= DefaultMaxLost {
			return fmt.Errorf("node %s attempt %d lost %d times and still goes on (limit %d)", s.r.NodeID(i), n.Attempt, n.Lost, DefaultMaxLost)
		}
		if n.State == records.NodeSucceeded && s.r.Outputs[i] == nil {
			return fmt.Errorf("node %s succeeded without output", s.r.NodeID(i))
		}
		if err := s.checkFan(i); err != nil {
			return err
		}
	}
	return nil
}

// checkFinal verifies the run ended and its status matches its nodes.
func (s *sim) checkFinal(stats *fanStats) error {
	if !s.r.Status.Terminal() {
		return fmt.Errorf("quiescent but run is %s", s.r.Status)
	}
	failed := 0
	for i, n := range s.r.Nodes {
		if !n.State.Terminal() {
			return fmt.Errorf("run %s but node %s is %s", s.r.Status, s.r.NodeID(i), n.State)
		}
		if n.State == records.NodeFailed {
			failed++
			// A crash is the system's fault: a node fails from a loss only
			// once one attempt was lost DefaultMaxLost times.
			if strings.Contains(n.Error, "stopped responding") && !strings.Contains(n.Error, "(limit ") {
				return fmt.Errorf("node %s failed because its worker was lost: %s", s.r.NodeID(i), n.Error)
			}
		}
		if n.FanOut {
			stats.instances += n.Done()
			switch {
			case n.State == records.NodeSucceeded && n.Count == 0:
				stats.empty++
			case n.State == records.NodeSucceeded:
				stats.succeeded++
			case n.State == records.NodeFailed:
				stats.failed++
			}
		}
	}
	if s.r.Status == records.RunCancelled {
		return nil // cancelled whatever had failed before
	}
	if (failed > 0) != (s.r.Status == records.RunFailed) {
		return fmt.Errorf("run %s with %d failed nodes", s.r.Status, failed)
	}
	return nil
}
