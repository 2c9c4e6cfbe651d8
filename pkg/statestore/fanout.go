package statestore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// ItemsWindow is how many foreach items one LRANGE reads.
const ItemsWindow = 10_000

// StoredFanOut is one fan-out node's per-instance state as stored.
type StoredFanOut struct {
	// Items are the foreach items by index (empty for parallel nodes).
	Items []string
	// Instances and Outputs map instance index → record / output JSON.
	Instances map[int]string
	Outputs   map[int]string
}

// LoadFanOut reads a fan-out node's items (in windows of ItemsWindow),
// instance records and instance outputs. The orchestrator calls it when it
// takes over a run with a fan-out node that has not succeeded.
func (k Keys) LoadFanOut(ctx context.Context, rdb redis.Cmdable, run, node string) (StoredFanOut, error) {
	pipe := rdb.Pipeline()
	n := pipe.LLen(ctx, k.Items(run, node))
	inst := pipe.HGetAll(ctx, k.Instances(run, node))
	outs := pipe.HGetAll(ctx, k.InstanceOutputs(run, node))
	if _, err := pipe.Exec(ctx); err != nil {
		return StoredFanOut{}, fmt.Errorf("load fan-out run=%s node=%s: %w", run, node, err)
	}
	st := StoredFanOut{Instances: byIndex(inst.Val()), Outputs: byIndex(outs.Val())}
	if total := n.Val(); total > 0 {
		items, err := k.readItems(ctx, rdb, run, node, total)
		if err != nil {
			return StoredFanOut{}, err
		}
		st.Items = items
	}
	return st, nil
}

// readItems reads total items in windows, all windows in one pipeline.
func (k Keys) readItems(ctx context.Context, rdb redis.Cmdable, run, node string, total int64) ([]string, error) {
	pipe := rdb.Pipeline()
	var cmds []*redis.StringSliceCmd
	for from := int64(0); from < total; from += ItemsWindow {
		cmds = append(cmds, pipe.LRange(ctx, k.Items(run, node), from, from+ItemsWindow-1))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("load items run=%s node=%s: %w", run, node, err)
	}
	items := make([]string, 0, total)
	for _, c := range cmds {
		items = append(items, c.Val()...)
	}
	return items, nil
}

func byIndex(m map[string]string) map[int]string {
	out := make(map[int]string, len(m))
	for f, v := range m {
		if idx, err := strconv.Atoi(f); err == nil {
			out[idx] = v
		}
	}
	return out
}

// InstancePage reads the records and outputs of instances [from, from+n) of
// a fan-out node; a missing record or output is "" (never started, or not
// succeeded).
func (k Keys) InstancePage(ctx context.Context, rdb redis.Cmdable, run, node string, from, n int) (recs, outs []string, err error) {
	if n <= 0 {
		return nil, nil, nil
	}
	fields := make([]string, n)
	for j := range fields {
		fields[j] = InstanceField(from + j)
	}
	pipe := rdb.Pipeline()
	rc := pipe.HMGet(ctx, k.Instances(run, node), fields...)
	oc := pipe.HMGet(ctx, k.InstanceOutputs(run, node), fields...)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, nil, fmt.Errorf("read instances run=%s node=%s from=%d: %w", run, node, from, err)
	}
	return stringVals(rc.Val()), stringVals(oc.Val()), nil
}

func stringVals(vals []any) []string {
	out := make([]string, len(vals))
	for j, v := range vals {
		if s, ok := v.(string); ok {
			out[j] = s
		}
	}
	return out
}
