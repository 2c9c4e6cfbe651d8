package workload

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLineJSON(t *testing.T) {
	t.Parallel()
	l := Line{Workload: "w", N: 10, Runs: 3, Target: "t", Method: "m"}
	l.set("wall_ms", []float64{3, 1, 2})
	l.set("cost_ratio", []float64{1.23456, 1, 2})
	l.set("p50_ms", []float64{math.NaN(), math.Inf(1)}) // nothing finite: null
	b, err := json.Marshal(l)
	require.NoError(t, err)
	s := string(b)
	require.True(t, strings.HasPrefix(s, `{"workload":"w","n":10,"runs":3,"wall_ms":2,"wall_ms_min":1,"wall_ms_max":3,"tasks_per_s":null,`), s)
	require.Contains(t, s, `"p50_ms":null,"p50_ms_min":null,"p50_ms_max":null`)
	require.Contains(t, s, `"cost_ratio":1.235,"cost_ratio_min":1,"cost_ratio_max":2,"target":"t","method":"m"}`)
	require.NotContains(t, s, "error")
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))

	l.Error = "boom"
	b, err = json.Marshal(l)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(b), `"method":"m","error":"boom"}`), string(b))
}

// A line of the cluster setup names it after the workload, and a line
// that keeps its samples writes every repetition's value before target.
func TestLineJSONSetupAndSamples(t *testing.T) {
	t.Parallel()
	l := Line{Workload: "w", Setup: "cluster", N: 1, Runs: 3, Target: "t", Method: "m"}
	l.keepSamples()
	l.set("wall_ms", []float64{3, 1, 2})
	l.set("cpu_us_per_task", []float64{1.23456, math.NaN(), 7})
	b, err := json.Marshal(l)
	require.NoError(t, err)
	s := string(b)
	require.True(t, strings.HasPrefix(s, `{"workload":"w","setup":"cluster","n":1,`), s)
	require.Contains(t, s, `"cpu_us_per_task":4.117,"cpu_us_per_task_min":1.235,"cpu_us_per_task_max":7,`+
		`"samples":{"wall_ms":[3,1,2],"cpu_us_per_task":[1.235,null,7]},"target":"t"`)
}

func TestDefinitions(t *testing.T) {
	t.Parallel()
	var def struct {
		Nodes []node `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal(fanOutDef("f", 10), &def))
	require.Len(t, def.Nodes, 10)
	require.Equal(t, "root", def.Nodes[0].ID)
	require.Len(t, def.Nodes[9].DependsOn, 8)
	require.NoError(t, json.Unmarshal(chainDef("c", 4), &def))
	require.Len(t, def.Nodes, 4)
	require.Equal(t, []string{"n2"}, def.Nodes[3].DependsOn)
	require.Empty(t, def.Nodes[0].DependsOn)
}

// A pooled percentile is the percentile of every sample, its _min/_max the
// per-repetition percentiles; met follows the headline values.
func TestLinePooledAndGoals(t *testing.T) {
	t.Parallel()
	fast := make([]float64, 99)
	for i := range fast {
		fast[i] = 1
	}
	slow := append(append([]float64{}, fast[:90]...), 10, 10, 10, 10, 10, 10, 10, 10, 10)
	l := Line{Workload: "w", N: 99, Runs: 3, Method: "m"}
	l.setPooled("", [][]float64{fast, fast, slow})
	l.set("tasks_per_s", []float64{5, 30, 25})
	l.setGoals("older", goal{figure: "p99_ms", atMost: true, limit: 3}, goal{figure: "tasks_per_s", limit: 20})
	b, err := json.Marshal(l)
	require.NoError(t, err)
	s := string(b)
	// The median of the repetitions' p99 would be 1; pooled it is 10.
	require.Contains(t, s, `"p50_ms":1,"p50_ms_min":1,"p50_ms_max":1,"p99_ms":10,"p99_ms_min":1,"p99_ms_max":10,`)
	require.Contains(t, s, `"latency_samples":297,"latency_samples_min":297,"latency_samples_max":297,`+
		`"latency_samples_per_rep":99,"latency_samples_per_rep_min":99,"latency_samples_per_rep_max":99,`)
	require.Contains(t, s, `"target":"#20: p99_ms ≤ 3, tasks_per_s ≥ 20; older","met":false,"method":"m; met: `)

	l.setPooled("", [][]float64{fast, fast, fast})
	require.Equal(t, true, *l.met(), "p99 1 ≤ 3 and the median tasks/s 25 ≥ 20")
	l.setGoals("", goal{figure: "client_wall_ms", atMost: true, limit: 300})
	require.Nil(t, l.met(), "a missing figure is neither met nor missed")
}

// A figure named like another's _min or _max would write a key twice.
func TestLineJSONDuplicateKey(t *testing.T) {
	t.Parallel()
	l := Line{Workload: "w", N: 1, Runs: 3}
	l.set("outstanding", []float64{1, 2, 3})
	l.set("outstanding_max", []float64{1, 2, 3})
	_, err := json.Marshal(l)
	require.ErrorContains(t, err, "outstanding_max")
}

func TestDevProfilePathKeepsBothProfiles(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/orch.pprof": "/tmp/orch-dev.pprof",
		"cpu":             "cpu-dev",
		"a.b/c.prof":      "a.b/c-dev.prof",
	} {
		if got := DevProfilePath(in); got != want {
			t.Errorf("DevProfilePath(%q) = %q, want %q", in, got, want)
		}
	}
}
