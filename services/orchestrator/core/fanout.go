package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/template"
)

// DefaultFanOutConcurrency caps the in-flight instances of a fan-out node
// that sets no concurrency, so that a 100,000-item foreach never turns into
// 100,000 dispatches in one batch.
const DefaultFanOutConcurrency = dag.DefaultFanOutConcurrency

// MaxInstances bounds the size of one fan-out (dag.MaxFanOut): a foreach
// or parallel that resolves above it fails its node, saying so, before
// anything is dispatched or stored.
const MaxInstances = dag.MaxFanOut

// fan is the in-memory state of a launched fan-out node that has not
// succeeded. The tallies live in the node record (records.FanOutCounts);
// what is here lets a completion be handled in O(1) without reading Redis.
type fan struct {
	// items are the foreach elements by index (nil for parallel).
	items []json.RawMessage
	// insts holds the records of started instances that have not succeeded.
	// Succeeded instances leave memory: their records are stored.
	insts map[int]*records.NodeRecord
	// outputs are the succeeded instances' outputs by index, kept until the
	// node finishes and assembles its output array once.
	outputs []json.RawMessage
	// retry lists instances a retry reset to pending, started before Next.
	retry []int
	// scope is the template scope shared by every instance (built lazily).
	scope template.MapScope
}

// fanCap is node i's cap on active instances.
func (r *Run) fanCap(i int) int {
	return r.Plan.Graph.Def.Nodes[i].InstanceCap()
}

// startFanOut launches fan-out node i: it resolves the items or the count,
// then dispatches the first instances up to the node's concurrency. It
// reports whether the node ended up terminal (nothing to do, a bad foreach
// or parallel, or every started instance failed at once); the caller
// propagates that.
func (r *Run) startFanOut(i int, now int64, eff *Effects) (terminal bool) {
	n := &r.Nodes[i]
	n.Attempt++
	n.QueuedAt, n.StartedAt, n.FinishedAt, n.Worker, n.Error = now, now, 0, "", ""
	if f := r.fans[i]; f != nil && n.FanOut { // a retry resumes the failed instances
		r.transition(i, records.NodeRunning, fmt.Sprintf("retrying %d instances", len(f.retry)), now, eff)
		return r.fanAdvance(i, now, eff)
	}
	items, count, err := r.fanSize(i)
	if err != nil {
		r.fail(i, err.Error(), now, eff)
		return true
	}
	n.FanOutCounts = records.FanOutCounts{FanOut: true, Count: count, InstanceBase: n.InstanceBase, InstanceHigh: n.InstanceHigh}
	if count == 0 {
		r.Outputs[i] = json.RawMessage("[]")
		eff.setOutput(i)
		n.FinishedAt = now
		r.transition(i, records.NodeSucceeded, "fan-out over no instances", now, eff)
		return true
	}
	r.setFan(i, &fan{items: items, insts: map[int]*records.NodeRecord{}, outputs: make([]json.RawMessage, count)})
	if items != nil {
		eff.FanOut.setItems(i, items)
	}
	r.transition(i, records.NodeRunning, fmt.Sprintf("fan-out of %d instances", count), now, eff)
	return r.fanAdvance(i, now, eff)
}

func (r *Run) setFan(i int, f *fan) {
	if r.fans == nil {
		r.fans = map[int]*fan{}
	}
	r.fans[i] = f
}

// fanSize resolves node i's foreach (to its items) or parallel (to a count).
func (r *Run) fanSize(i int) ([]json.RawMessage, int, error) {
	node := r.Plan.Graph.Def.Nodes[i]
	scope := r.scope(r.Plan.Graph.Refs[i], decodeJSON)
	if node.Foreach != "" {
		v, err := template.ResolveString(node.Foreach, scope)
		if err != nil {
			return nil, 0, fmt.Errorf("node %s: foreach %q: %w", node.ID, node.Foreach, err)
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, 0, fmt.Errorf("node %s: foreach %q must yield a JSON array, got %s", node.ID, node.Foreach, kind(v))
		}
		return encodeItems(node.ID, arr)
	}
	raw := decodeJSON(node.Parallel)
	src := string(bytes.TrimSpace(node.Parallel))
	if s, ok := raw.(string); ok {
		src = s
		v, err := template.ResolveString(s, scope)
		if err != nil {
			return nil, 0, fmt.Errorf("node %s: parallel %q: %w", node.ID, s, err)
		}
		raw = v
	}
	n, ok := wholeNumber(raw)
	if !ok || n < 0 || n > MaxInstances {
		return nil, 0, fmt.Errorf("node %s: parallel %q must resolve to an integer from 0 to %d, got %s", node.ID, src, MaxInstances, describeValue(raw))
	}
	return nil, int(n), nil
}

func encodeItems(node string, arr []any) ([]json.RawMessage, int, error) {
	if len(arr) > MaxInstances {
		return nil, 0, fmt.Errorf("node %s: foreach yields %d items, over the limit of %d", node, len(arr), MaxInstances)
	}
	items := make([]json.RawMessage, len(arr))
	for k, v := range arr {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, 0, fmt.Errorf("node %s: foreach item %d: %w", node, k, err)
		}
		items[k] = b
	}
	return items, len(arr), nil
}

// wholeNumber reads a JSON number (or a string of digits, as an
// interpolated template yields) as an integer.
func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		f, err := x.Float64()
		return int64(f), err == nil && f == math.Trunc(f) && math.Abs(f) <= MaxInstances
	case float64:
		return int64(x), x == math.Trunc(x) && math.Abs(x) <= MaxInstances
	case string:
		return wholeNumber(json.Number(x))
	}
	return 0, false
}

func describeValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil || len(b) > 64 {
		return kind(v)
	}
	return kind(v) + " " + string(b)
}

// kind names a decoded JSON value's type.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
