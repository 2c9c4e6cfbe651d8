package core

import (
	"encoding/json"
	"slices"

	"github.com/braidhq/braid/pkg/records"
)

// Slot names one instance of a fan-out node: the node's position and the
// instance's 0-based index.
type Slot struct{ Node, Instance int }

// FanOutEffects is what a batch changed in fan-out storage. The shell writes
// it in the same fenced script as the node records, resets first.
type FanOutEffects struct {
	// Resets lists fan-out nodes whose stored instances, instance outputs and
	// items must be deleted (a rerun). Writes below come after the delete.
	Resets []int
	// Items holds, per node, the foreach elements resolved at launch, to append
	// to the node's item list (nil slices for parallel nodes are not listed).
	Items map[int][]json.RawMessage
	// Instances holds the latest record of every instance that changed.
	Instances map[Slot]records.NodeRecord
	// Outputs holds the output of every instance that succeeded.
	Outputs map[Slot]json.RawMessage
}

func (f *FanOutEffects) empty() bool {
	return len(f.Resets) == 0 && len(f.Items) == 0 && len(f.Instances) == 0 && len(f.Outputs) == 0
}

// Nodes lists, sorted, every node position the effects touch.
func (f *FanOutEffects) Nodes() []int {
	seen := map[int]bool{}
	for _, i := range f.Resets {
		seen[i] = true
	}
	for i := range f.Items {
		seen[i] = true
	}
	for s := range f.Instances {
		seen[s.Node] = true
	}
	for s := range f.Outputs {
		seen[s.Node] = true
	}
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

func (f *FanOutEffects) setInstance(s Slot, rec records.NodeRecord) {
	if f.Instances == nil {
		f.Instances = map[Slot]records.NodeRecord{}
	}
	f.Instances[s] = rec
}

func (f *FanOutEffects) setOutput(s Slot, out json.RawMessage) {
	if f.Outputs == nil {
		f.Outputs = map[Slot]json.RawMessage{}
	}
	f.Outputs[s] = out
}

func (f *FanOutEffects) setItems(i int, items []json.RawMessage) {
	if f.Items == nil {
		f.Items = map[int][]json.RawMessage{}
	}
	f.Items[i] = items
}

// reset records that node i's fan-out storage goes, dropping whatever this
// batch had queued for it.
func (f *FanOutEffects) reset(i int) {
	if !slices.Contains(f.Resets, i) {
		f.Resets = append(f.Resets, i)
	}
	delete(f.Items, i)
	for s := range f.Instances {
		if s.Node == i {
			delete(f.Instances, s)
		}
	}
	for s := range f.Outputs {
		if s.Node == i {
			delete(f.Outputs, s)
		}
	}
}
