package orchsvc

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/core"
)

// fanOutWrites turns the core's fan-out effects into per-node writes for
// the run's fenced script.
func fanOutWrites(r *core.Run, f *core.FanOutEffects) []statestore.FanOutWrite {
	nodes := f.Nodes()
	if len(nodes) == 0 {
		return nil
	}
	at := make(map[int]int, len(nodes))
	out := make([]statestore.FanOutWrite, len(nodes))
	for k, i := range nodes {
		at[i] = k
		out[k] = statestore.FanOutWrite{Node: r.NodeID(i), Instances: map[int][]byte{}, Outputs: map[int][]byte{}}
	}
	for _, i := range f.Resets {
		out[at[i]].Reset = true
	}
	for i, items := range f.Items {
		w := &out[at[i]]
		w.Items = make([][]byte, len(items))
		for k, it := range items {
			w.Items[k] = it
		}
	}
	for s, rec := range f.Instances {
		out[at[s.Node]].Instances[s.Instance] = rec.Encode()
	}
	for s, o := range f.Outputs {
		if records.StoresOutput(o) {
			out[at[s.Node]].Outputs[s.Instance] = o
		}
	}
	return out
}

// restoreFanOuts loads the per-instance state of r's launched fan-out nodes
// that have not succeeded.
func (s *Service) restoreFanOuts(ctx context.Context, r *core.Run) error {
	for _, i := range r.FanOutsToLoad() {
		st, err := s.keys.LoadFanOut(ctx, s.rdb, r.ID, r.NodeID(i))
		if err != nil {
			return fmt.Errorf("restore run %s: %w", r.ID, err)
		}
		fs := core.FanOutState{Instances: make(map[int]records.NodeRecord, len(st.Instances)), Outputs: make(map[int]json.RawMessage, len(st.Outputs))}
		if len(st.Items) > 0 {
			fs.Items = make([]json.RawMessage, len(st.Items))
			for k, it := range st.Items {
				fs.Items[k] = json.RawMessage(it)
			}
		}
		for idx, raw := range st.Instances {
			rec, err := records.DecodeNodeRecord([]byte(raw))
			if err != nil {
				return fmt.Errorf("restore run %s node %s instance %d: %w", r.ID, r.NodeID(i), idx, err)
			}
			fs.Instances[idx] = rec
		}
		for idx, o := range st.Outputs {
			fs.Outputs[idx] = json.RawMessage(o)
		}
		r.RestoreFanOut(i, fs)
	}
	return nil
}

// dispatchKey is the record key of a dispatch (SPEC §2: run id + node
// instance), so that one run's ready nodes and fan-out instances spread over
// every partition, and so every worker, instead of queueing on one. Workers
// need no order between dispatches; results return keyed by run id.
func dispatchKey(r *core.Run, d core.Dispatch) string {
	return r.ID + "/" + r.NodeID(d.Node) + "#" + strconv.Itoa(d.Instance)
}
