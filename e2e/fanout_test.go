package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// TestFanOutForeachRespectsConcurrency runs a foreach over 1,000 items with
// concurrency 10 on workers offering 16 slots, and proves from the recorded
// start and finish times of every instance that no more than 10 ever ran at
// once; the node's output is the array of instance outputs in index order.
func TestFanOutForeachRespectsConcurrency(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{workers: 2, concurrency: 8})
	items := make([]int, 1000)
	for i := range items {
		items[i] = 1000 + i
	}
	gen, err := json.Marshal(map[string]any{"items": items})
	require.NoError(t, err)
	name, v := e.register([]byte(`{"name":"fan-cap","nodes":[
	  {"id":"gen","handler":"noop","config":` + string(gen) + `},
	  {"id":"each","handler":"simulate","depends_on":["gen"],"foreach":"<< gen.items >>","concurrency":10,
	   "config":{"duration":"15ms","output":{"i":"<< index >>","item":"<< item >>","of":"<< count >>"}}}]}`))
	id := e.start(name, v, `{}`)
	st := e.wait(id, 3*time.Minute)
	require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus], st.Fields[records.FieldError])

	var outs []struct{ I, Item, Of int }
	require.NoError(t, json.Unmarshal([]byte(st.Outputs["each"]), &outs))
	require.Len(t, outs, 1000)
	for k, o := range outs {
		require.Equal(t, struct{ I, Item, Of int }{k, 1000 + k, 1000}, o, "output[%d]", k)
	}
	rec := nodeRecord(t, st, "each")
	require.Equal(t, records.FanOutCounts{FanOut: true, Count: 1000, Next: 1000, Succeeded: 1000, InstanceHigh: 1}, rec.FanOutCounts)

	fan, err := e.keys.LoadFanOut(context.Background(), e.rdb, id, "each")
	require.NoError(t, err)
	require.Len(t, fan.Instances, 1000)
	peak := maxOverlap(t, fan.Instances)
	require.LessOrEqual(t, peak, 10, "instances in flight at once")
	require.GreaterOrEqual(t, peak, 2, "instances never ran side by side: the cap was not what bound them")
	t.Logf("peak concurrency %d of 10", peak)
}

// maxOverlap returns the largest number of instances whose [started,
// finished] intervals overlap; at equal times a finish counts first.
func maxOverlap(t *testing.T, recs map[int]string) int {
	t.Helper()
	type edge struct {
		at int64
		d  int
	}
	var edges []edge
	for idx, raw := range recs {
		r, err := records.DecodeNodeRecord([]byte(raw))
		require.NoError(t, err)
		require.Equal(t, records.NodeSucceeded, r.State, "instance %d", idx)
		require.Positive(t, r.StartedAt, "instance %d has no start time", idx)
		require.GreaterOrEqual(t, r.FinishedAt, r.StartedAt, "instance %d", idx)
		edges = append(edges, edge{r.StartedAt, +1}, edge{r.FinishedAt, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.d - b.d
	})
	cur, peak := 0, 0
	for _, e := range edges {
		cur += e.d
		peak = max(peak, cur)
	}
	return peak
}

// TestFanOutParallelAndEmpty runs parallel with its count from an upstream
// output and a foreach over an empty array, and reads both downstream.
func TestFanOutParallelAndEmpty(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{workers: 1})
	name, v := e.register([]byte(`{"name":"fan-parallel","nodes":[
	  {"id":"plan","handler":"noop","config":{"shards":3,"nothing":[]}},
	  {"id":"shard","handler":"noop","depends_on":["plan"],"parallel":"<< plan.shards >>",
	   "config":{"shard":"<< index >>","of":"<< count >>"}},
	  {"id":"none","handler":"noop","depends_on":["plan"],"foreach":"<< plan.nothing >>","config":{"x":"<< item >>"}},
	  {"id":"report","handler":"noop","depends_on":["shard","none"],
	   "config":{"last":"<< shard[2].shard >>","all":"<< shard >>","none":"<< none >>"}}]}`))
	st := e.wait(e.start(name, v, `{}`), time.Minute)
	require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus], st.Fields[records.FieldError])
	require.JSONEq(t, `[{"shard":0,"of":3},{"shard":1,"of":3},{"shard":2,"of":3}]`, st.Outputs["shard"])
	require.JSONEq(t, `[]`, st.Outputs["none"])
	require.JSONEq(t, `{"last":2,"all":[{"shard":0,"of":3},{"shard":1,"of":3},{"shard":2,"of":3}],"none":[]}`, st.Outputs["report"])
}

// TestFanOutInstanceFailureFollowsTriggerRules fails one instance on every
// attempt: it is retried per the node's policy, the other instances
// succeed, the node fails, and downstream follows its trigger rules.
func TestFanOutInstanceFailureFollowsTriggerRules(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{workers: 1})
	name, v := e.register([]byte(`{"name":"fan-fail","nodes":[
	  {"id":"list","handler":"noop","config":{"xs":[1,2,3]}},
	  {"id":"check","handler":"shell","depends_on":["list"],"foreach":"<< list.xs >>",
	   "retry":{"max_attempts":2,"initial_interval":"50ms"},
	   "config":{"command":"test << item >> -ne 2 && echo ok << item >>"}},
	  {"id":"publish","handler":"noop","depends_on":["check"]},
	  {"id":"cleanup","handler":"noop","depends_on":["check"],"trigger_rule":"all_done"}]}`))
	id := e.start(name, v, `{}`)
	st := e.wait(id, time.Minute)
	require.Equal(t, string(records.RunFailed), st.Fields[records.FieldStatus])
	check := nodeRecord(t, st, "check")
	require.Equal(t, records.NodeFailed, check.State)
	require.Equal(t, records.FanOutCounts{FanOut: true, Count: 3, Next: 3, Succeeded: 2, Failed: 1, InstanceHigh: 2}, check.FanOutCounts)
	require.True(t, strings.HasPrefix(check.Error, "1 of 3 instances failed (0 cancelled); first: instance 1: "), check.Error)
	require.Equal(t, records.NodeSkipped, nodeRecord(t, st, "publish").State)
	require.Equal(t, records.NodeSucceeded, nodeRecord(t, st, "cleanup").State)

	fan, err := e.keys.LoadFanOut(context.Background(), e.rdb, id, "check")
	require.NoError(t, err)
	failed, err := records.DecodeNodeRecord([]byte(fan.Instances[1]))
	require.NoError(t, err)
	require.Equal(t, records.NodeFailed, failed.State)
	require.Equal(t, 2, failed.Attempt, "the failing instance used its retry")
	require.Contains(t, fan.Outputs[2], "ok 3")
	require.NotContains(t, fan.Outputs, 1)
}

// TestFanOutHundredThousand runs a 100,000-item foreach of noop. It takes
// minutes, so it runs only with BRAID_BIG=1 (make bench-fanout).
func TestFanOutHundredThousand(t *testing.T) {
	if os.Getenv("BRAID_BIG") != "1" {
		t.Skip("set BRAID_BIG=1 to run the 100,000-item fan-out")
	}
	e := startEngine(t, engineOpts{workers: 2, concurrency: 32})
	name, v := e.register([]byte(`{"name":"fan-big","nodes":[
	  {"id":"gen","handler":"transform","config":{"jq":"[range(100000)]","input":null}},
	  {"id":"each","handler":"noop","depends_on":["gen"],"foreach":"<< gen >>","config":{"n":"<< item >>"}},
	  {"id":"sum","handler":"noop","depends_on":["each"],"config":{"count":"<< each | length >>"}}]}`))
	start := time.Now()
	id := e.start(name, v, `{}`)
	st := e.wait(id, 30*time.Minute)
	took := time.Since(start)
	require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus], st.Fields[records.FieldError])
	require.JSONEq(t, `{"count":100000}`, st.Outputs["sum"])
	var outs []struct{ N int }
	require.NoError(t, json.Unmarshal([]byte(st.Outputs["each"]), &outs))
	for k, o := range outs {
		require.Equal(t, k, o.N, "output[%d]", k)
	}
	t.Logf("100,000-item foreach finished in %s (%s per instance)", took, took/100000)
	fmt.Printf("BENCH fan-out 100000 noop instances: %s\n", took)
}
