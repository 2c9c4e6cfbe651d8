package core

import (
	"encoding/json"
	"slices"

	"github.com/braidhq/braid/pkg/records"
)

// FanOutState is the stored per-instance state of one fan-out node, as the
// shell loads it after Restore.
type FanOutState struct {
	// Items are the foreach elements by index (nil for parallel).
	Items []json.RawMessage
	// Instances are the stored instance records by index.
	Instances map[int]records.NodeRecord
	// Outputs are the stored outputs of succeeded instances by index.
	Outputs map[int]json.RawMessage
}

// FanOutsToLoad lists the fan-out nodes whose FanOutState the shell must
// load after Restore: launched and not succeeded (a failed or cancelled one
// may still be retried).
func (r *Run) FanOutsToLoad() []int {
	var out []int
	for i, n := range r.Nodes {
		if n.FanOut && n.State != records.NodeSucceeded && n.State != records.NodeSkipped {
			out = append(out, i)
		}
	}
	return out
}

// RestoreFanOut installs the loaded state of fan-out node i.
func (r *Run) RestoreFanOut(i int, st FanOutState) {
	n := r.Nodes[i]
	f := &fan{items: st.Items, insts: map[int]*records.NodeRecord{}, outputs: make([]json.RawMessage, n.Count)}
	for idx, rec := range st.Instances {
		if idx < 0 || idx >= n.Count {
			continue
		}
		if rec.State == records.NodePending {
			f.retry = append(f.retry, idx)
		}
		if rec.State != records.NodeSucceeded {
			rec := rec
			f.insts[idx] = &rec
		}
	}
	slices.Sort(f.retry)
	for idx, out := range st.Outputs {
		if idx >= 0 && idx < n.Count {
			f.outputs[idx] = out
		}
	}
	r.setFan(i, f)
}
