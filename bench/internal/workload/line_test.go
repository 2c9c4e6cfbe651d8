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
