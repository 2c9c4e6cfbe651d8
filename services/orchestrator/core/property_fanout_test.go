package core

import (
	"encoding/json"
	"fmt"

	"github.com/braidhq/braid/pkg/records"
)

// mirrorFanOut applies fan-out effects to the simulated store, as the
// shell's write script does: resets first, then items, records and outputs.
func (s *sim) mirrorFanOut(f *FanOutEffects) {
	for _, i := range f.Resets {
		delete(s.items, i)
		for slot, rec := range s.instances {
			if slot.Node == i {
				s.genBase[i] = max(s.genBase[i], rec.Attempt)
				delete(s.instances, slot)
				delete(s.instOuts, slot)
				delete(s.instTerm, slot)
				delete(s.instBase, slot)
			}
		}
	}
	for i, items := range f.Items {
		s.items[i] = items
	}
	for slot, rec := range f.Instances {
		s.instances[slot] = rec
	}
	for slot, out := range f.Outputs {
		s.instOuts[slot] = out
	}
}

// checkFan verifies fan-out node i: its tallies match its stored instance
// records, the cap holds, and a succeeded node's output is the array of its
// instances' outputs in index order.
func (s *sim) checkFan(i int) error {
	n := s.r.Nodes[i]
	id := s.r.NodeID(i)
	if !n.FanOut {
		return nil
	}
	var c records.FanOutCounts
	started := 0
	for slot, rec := range s.instances {
		if slot.Node != i {
			continue
		}
		if slot.Instance >= n.Next {
			return fmt.Errorf("node %s instance %d stored but next=%d", id, slot.Instance, n.Next)
		}
		started++
		tally(&c, rec.State, 1)
		base, kept := s.instBase[slot]
		if !kept {
			base = s.genBase[i]
		}
		if limit := s.r.Plan.Graph.Def.Nodes[i].Retry.Attempts(); rec.Attempt-base > limit || rec.Lost >= DefaultMaxLost {
			return fmt.Errorf("node %s instance %d on attempt %d of %d (counting from %d) with %d losses", id, slot.Instance, rec.Attempt, limit, base, rec.Lost)
		}
	}
	if c.Active != n.Active || c.Succeeded != n.Succeeded || c.Failed != n.Failed || c.Cancelled != n.Cancelled {
		return fmt.Errorf("node %s tallies %+v, stored instances say %+v", id, n.FanOutCounts, c)
	}
	if limit := s.r.fanCap(i); n.Active > limit {
		return fmt.Errorf("node %s has %d active instances over its cap %d", id, n.Active, limit)
	}
	if n.State.Terminal() && n.State != records.NodeCancelled && n.Done() != n.Count {
		return fmt.Errorf("node %s is %s with %d of %d instances done", id, n.State, n.Done(), n.Count)
	}
	if n.State != records.NodeSucceeded {
		return nil
	}
	var outs []json.RawMessage
	if err := json.Unmarshal(s.r.Outputs[i], &outs); err != nil || len(outs) != n.Count {
		return fmt.Errorf("node %s output %s is not an array of %d", id, s.r.Outputs[i], n.Count)
	}
	for k, o := range outs {
		want := s.instOuts[Slot{Node: i, Instance: k}]
		var got, exp any
		_ = json.Unmarshal(o, &got)
		_ = json.Unmarshal(want, &exp)
		if fmt.Sprint(got) != fmt.Sprint(exp) || want == nil {
			return fmt.Errorf("node %s output[%d] = %s, instance output %s", id, k, o, want)
		}
	}
	return nil
}
