package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/bench/internal/workload"
	"github.com/stretchr/testify/require"
)

// smokeTimeout bounds the whole smoke run (build included).
const smokeTimeout = 5 * time.Minute

// TestSmoke runs every workload at tiny sizes against a real stack of
// separate processes and checks that each printed one well-formed line
// whose runs succeeded. It asserts no timing: figures on a shared machine
// are not pass/fail material.
func TestSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), smokeTimeout)
	defer cancel()
	var out, progress bytes.Buffer
	err := run(ctx, config{reps: 3, smoke: true}, &out, &progress)
	require.NoError(t, err, "progress:\n%s", progress.String())

	lines := parseLines(t, out.String())
	entries := workload.Suite(workload.Smoke)
	require.Len(t, lines, len(entries), "one line per workload:\n%s", out.String())
	for i, l := range lines {
		name, _ := l["workload"].(string)
		entry := entries[i].Name
		t.Run(entry+"/"+name, func(t *testing.T) {
			requireWellFormed(t, l)
			if strings.HasPrefix(entry, "dev_") {
				require.Equal(t, "dev", l["setup"], "a braid dev line says so")
				require.Contains(t, l["method"], "Setup dev: ")
			} else {
				require.NotContains(t, l, "setup", "the default setup's lines read as before the cluster setup")
			}
			requireNewFigures(t, entry, l)
			if entry != "floor" {
				require.Positive(t, l["floor_hop_p50_ms"], "the floor measured again right before the line")
				require.Positive(t, l["floor_hops_per_s"])
				require.Contains(t, l["method"], "measured again right before this workload")
			}
		})
	}
}

// requireNewFigures checks issue 20's figures where a line has them:
// pooled percentiles with their sample count, client walls, both Redis
// byte counts, the outstanding instances, Redis CPU in the costs, runs in
// flight at a window's end, and met beside the goals.
func requireNewFigures(t *testing.T, entry string, l map[string]any) {
	t.Helper()
	for _, suffix := range []string{"", "_off", "_on"} {
		p50, ok := l["p50_ms"+suffix].(float64)
		if !ok {
			continue
		}
		require.Positive(t, l["latency_samples"+suffix], "pooled samples of p50_ms%s", suffix)
		require.GreaterOrEqual(t, l["p99_ms"+suffix], p50, "pooled p99 ≥ pooled p50")
		require.Contains(t, l["method"], "pooled")
	}
	if all, ok := l["redis_bytes_per_node_all"]; ok {
		require.GreaterOrEqual(t, all, l["redis_bytes_per_node"], "everything ≥ the engine state alone")
		require.Contains(t, []string{"chain_hop", "dev_chain_hop", "fanout", "dev_fanout", "fanout_big", "dev_fanout_big", "chain", "redis"}, entry)
	}
	switch entry {
	case "chain_hop", "dev_chain_hop", "chain", "fanout_big", "dev_fanout_big":
		require.Positive(t, l["client_wall_ms"], "client wall")
		require.Positive(t, l["client_decode_ms"], "the bench's decoding of the answer, reported apart from the client wall")
		require.Positive(t, l["client_ms_per_node"], "client wall per node")
		require.IsType(t, true, l["met"], "met beside the #20 goal")
		require.Contains(t, l["target"], "#20: ")
		require.Positive(t, l["redis_bytes_per_node_all"])
		if strings.HasSuffix(entry, "chain_hop") {
			require.Positive(t, l["client_wall_ms_tailed"], "client wall of the tailed repetitions beside the untailed")
		}
	case "redis":
		require.Positive(t, l["redis_bytes_per_node_all_null"])
		require.Greater(t, l["redis_bytes_per_node_all"], l["redis_bytes_per_node_all_null"], "outputs cost memory")
	case "inflight":
		// At smoke size the runs take milliseconds: the peak may be read
		// as they end, with none outstanding, and the line must say so.
		require.Positive(t, l["outstanding_instances_highest"], "instances outstanding at the first read, right after the starts")
		require.GreaterOrEqual(t, l["outstanding_instances_highest"], l["outstanding_instances"])
		if l["outstanding_instances"].(float64) < l["n"].(float64) {
			require.Contains(t, l["method"], "NOTE: fewer instances than intended were outstanding")
		}
	case "cost", "cost_foreach":
		// 10-ms CPU ticks over smoke-sized work may read 0: null ratios.
		for _, k := range []string{"redis_cpu_us_per_node_large", "redis_cpu_us_per_node_small", "cost_ratio_with_redis"} {
			require.Contains(t, l, k)
			if x, ok := l[k].(float64); ok {
				require.GreaterOrEqual(t, x, 0.0, k)
			}
		}
	case "diamond", "dev_diamond":
		require.GreaterOrEqual(t, l["in_flight_at_end"], 0.0)
		require.IsType(t, true, l["met"])
		require.Contains(t, l["method"], "in_flight_at_end")
	case "single", "dev_single":
		require.IsType(t, true, l["met"])
	case "tracing":
		require.GreaterOrEqual(t, l["in_flight_at_end_on"], 0.0)
	}
}

// TestSmokeCluster runs a few workloads at tiny sizes on the cluster
// setup (a 3+3 Redis Cluster and three kfake brokers, each in its own
// processes): the fan-out, whose per-node Redis memory SCANs every master,
// and the resource costs, which read every master's INFO.
func TestSmokeCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), smokeTimeout)
	defer cancel()
	var out, progress bytes.Buffer
	err := run(ctx, config{reps: 3, smoke: true, cluster: true, only: "fanout,resources"}, &out, &progress)
	require.NoError(t, err, "progress:\n%s", progress.String())

	lines := parseLines(t, out.String())
	require.Len(t, lines, 3, "floor, fanout and resources:\n%s", out.String())
	for _, l := range lines {
		name, _ := l["workload"].(string)
		t.Run(name, func(t *testing.T) {
			requireWellFormed(t, l)
			require.Equal(t, "cluster", l["setup"])
			require.Contains(t, l["method"], "Setup cluster: ")
		})
	}
	require.Positive(t, lines[1]["redis_bytes_per_node"], "the run's keys were found on the masters")
}

// standard are the figures every line carries, each with _min and _max.
var standard = []string{"wall_ms", "tasks_per_s", "p50_ms", "p99_ms", "rss_mb", "redis_bytes_per_node", "floor_ratio"}

func parseLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "not a JSON object: %s", sc.Text())
		lines = append(lines, m)
	}
	return lines
}

func requireWellFormed(t *testing.T, l map[string]any) {
	require.NotEmpty(t, l["workload"])
	require.NotContains(t, l, "error")
	require.Greater(t, l["n"], 0.0)
	require.NotEmpty(t, l["method"])
	require.NotEmpty(t, l["target"])
	for _, f := range standard {
		for _, k := range []string{f, f + "_min", f + "_max"} {
			require.Contains(t, l, k)
		}
	}
	require.NotContains(t, l, "skipped", "no workload may be skipped")
	require.GreaterOrEqual(t, l["runs"], 3.0)
	figures := 0
	for k, v := range l {
		x, ok := v.(float64)
		if !ok || k == "n" || k == "runs" {
			continue
		}
		figures++
		if base, isMin := strings.CutSuffix(k, "_min"); isMin {
			require.LessOrEqual(t, x, l[base].(float64), "%s above its median", k)
			require.LessOrEqual(t, l[base].(float64), l[base+"_max"].(float64), "%s_max below its median", base)
		}
	}
	require.Positive(t, figures, "line has no figures")
	if samples, ok := l["samples"].(map[string]any); ok {
		requireSamples(t, l, samples)
	}
}

// requireSamples checks a line's samples: every repetition of every
// figure, and each figure's min and max among them.
func requireSamples(t *testing.T, l map[string]any, samples map[string]any) {
	t.Helper()
	require.NotEmpty(t, samples)
	for name, v := range samples {
		xs, ok := v.([]any)
		require.True(t, ok, "samples of %s: %v", name, v)
		require.Len(t, xs, int(l["runs"].(float64)), "samples of %s", name)
		require.Contains(t, xs, l[name+"_min"], "samples of %s hold its min", name)
		require.Contains(t, xs, l[name+"_max"], "samples of %s hold its max", name)
	}
	// Costs are net of the background, which at smoke size can outweigh
	// CPU and Redis figures; nothing in the background writes to Kafka.
	for _, name := range []string{"orchestrator_cpu_us_per_task", "redis_commands_per_run", "redis_repl_bytes_per_task"} {
		require.IsType(t, 0.0, l[name], name)
	}
	for _, name := range []string{"kafka_records_per_task", "kafka_bytes_per_run"} {
		require.Positive(t, l[name], name)
	}
}

func TestParseConfig(t *testing.T) {
	t.Parallel()
	env := map[string]string{"BENCH_SUSTAIN": "60s", "BENCH_ONLY": "diamond", "BENCH_CLUSTER": "1"}
	c, err := parseConfig(nil, func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, config{reps: 3, sustain: time.Minute, only: "diamond", cluster: true}, c)

	c, err = parseConfig([]string{"-sustain", "5s", "-reps", "4", "-smoke"}, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, config{reps: 4, sustain: 5 * time.Second, smoke: true}, c)

	for _, bad := range [][]string{{"-reps", "2"}, {"-reps", "x"}, {"-sustain", "soon"}, {"-sustain", "10ms"}, {"-nope"}} {
		_, err := parseConfig(bad, func(string) string { return "" })
		require.Error(t, err, "%v", bad)
	}
}
