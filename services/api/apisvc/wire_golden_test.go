package apisvc

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/wire/*.json from the current output")

// TestWireGolden renders runs, run pages, tasks and schedules from fixed
// stored data, fully populated and nearly empty, and compares the bytes
// the api writes with testdata/wire: a change of field names, order,
// omission or time format fails here even where openapi.json allows it.
func TestWireGolden(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_767_225_600_000) // 2026-01-01T00:00:00Z
	full, bare := goldenRuns(t, now)
	w := full.waitContext(now, nil)
	tests := []struct {
		name string
		v    any
	}{
		{"run_full", (&Server{}).viewRun(context.Background(), full, now)},
		{"run_bare", (&Server{}).viewRun(context.Background(), bare, now)},
		{"run_page", apiwire.RunPage{Items: []apiwire.RunSummary{summarize(full.id, full.stored.Fields), summarize(bare.id, bare.stored.Fields)},
			NextCursor: "cur"}},
		{"run_page_empty", apiwire.RunPage{Items: []apiwire.RunSummary{}}},
		{"task_fanout", full.task(2, w, now)},
		{"schedule_full", newScheduleDoc(goldenSchedule(now))},
		{"schedule_bare", newScheduleDoc(statestore.StoredSchedule{Def: statestore.ScheduleDef{ID: "s2", Workflow: "wf", Cron: "@daily"}})},
		{"schedule_page", apiwire.SchedulePage{Items: []apiwire.Schedule{newScheduleDoc(goldenSchedule(now))}, NextCursor: "next"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got bytes.Buffer
			require.NoError(t, jsonEncode(&got, tc.v))
			path := filepath.Join("testdata", "wire", tc.name+".json")
			if *updateGolden {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, got.Bytes(), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), got.String())
		})
	}
}

// goldenRuns returns a run whose every view field is set (nodes succeeded
// after a loss and a retry, retrying, a running fan-out at its cap,
// waiting on parents) and one recorded but not started.
func goldenRuns(t *testing.T, now time.Time) (full, bare *loadedRun) {
	t.Helper()
	g, err := dag.Compile(&dag.Definition{Name: "wf", Nodes: []dag.Node{
		{ID: "a", Handler: "shell", Retry: &dag.RetryPolicy{MaxAttempts: 3}},
		{ID: "b", Handler: "http", Retry: &dag.RetryPolicy{MaxAttempts: 2}},
		{ID: "fan", Handler: "noop", DependsOn: []string{"a"}, Foreach: "<< a.items >>", Concurrency: 2},
		{ID: "z", Handler: "noop", DependsOn: []string{"b", "fan"}},
	}})
	require.NoError(t, err)
	ms := now.UnixMilli()
	a := records.NodeRecord{State: records.NodeSucceeded, Attempt: 2, QueuedAt: ms - 9000, StartedAt: ms - 8000,
		FinishedAt: ms - 7000, Worker: "w-2", Reason: "rerun by ops", Lost: 1, Past: []records.PastAttempt{
			{Attempt: 1, Outcome: records.OutcomeFailed, Worker: "w-0", QueuedAt: ms - 20000, StartedAt: ms - 19000, EndedAt: ms - 18000, Error: "exit 1"},
			{Attempt: 2, Outcome: records.OutcomeReset, QueuedAt: ms - 12000, EndedAt: ms - 11000, State: records.NodeRunning},
		}}
	b := records.NodeRecord{State: records.NodeRetryWait, Attempt: 1, QueuedAt: ms - 6000, StartedAt: ms - 5000,
		FinishedAt: ms - 4000, Worker: "w-1", Error: "HTTP 503", RetryAt: ms + 1500, Past: []records.PastAttempt{
			{Attempt: 1, Outcome: records.OutcomeFailed, Worker: "w-1", QueuedAt: ms - 6000, StartedAt: ms - 5000, EndedAt: ms - 4000, Error: "HTTP 503"},
		}}
	fan := records.NodeRecord{State: records.NodeRunning, Attempt: 1, QueuedAt: ms - 3000, StartedAt: ms - 2500,
		FanOutCounts: records.FanOutCounts{FanOut: true, Count: 5, Next: 3, Active: 2, Succeeded: 1}}
	full = &loadedRun{id: "r-full", graph: g, stored: statestore.StoredRun{
		Fields: map[string]string{
			records.FieldWorkflow: "wf", records.FieldVersion: "3", records.FieldStatus: "running",
			records.FieldInput: `{"who":"ann","n":2}`, records.FieldCreated: "1767225500000",
			records.FieldStarted: "1767225501234", records.FieldFinished: "1767225599999", records.FieldError: "one node failed",
			records.FieldSeq: "42", records.FieldPaused: "0", records.FieldRequestedBy: "ci",
		},
		Nodes:   map[string]string{"a": string(a.Encode()), "b": string(b.Encode()), "fan": string(fan.Encode())},
		Outputs: map[string]string{"fan": `[{"i":0}]`},
	}}
	for _, n := range g.Def.Nodes {
		full.nodes = append(full.nodes, full.record(n.ID))
	}
	bare = &loadedRun{id: "r-bare", graph: g, stored: statestore.StoredRun{
		Fields: map[string]string{records.FieldWorkflow: "wf", records.FieldVersion: "1", records.FieldStatus: "pending",
			records.FieldInput: `{}`, records.FieldPaused: "1"},
	}}
	for _, n := range g.Def.Nodes {
		bare.nodes = append(bare.nodes, bare.record(n.ID))
	}
	return full, bare
}

// goldenSchedule is a schedule with every field set.
func goldenSchedule(now time.Time) statestore.StoredSchedule {
	ms := now.UnixMilli()
	return statestore.StoredSchedule{
		Def: statestore.ScheduleDef{ID: "s1", Workflow: "wf", Cron: "0 9 * * 1-5", Timezone: "Europe/Paris",
			Input: json.RawMessage(`{"k":"v"}`), Enabled: true, Overlap: "allow", CreatedMs: ms - 86_400_000,
			UpdatedMs: ms - 3_600_000, CreatedBy: "ops"},
		Next: now.Add(90 * time.Minute), LastFire: now.Add(-time.Hour).Add(123 * time.Millisecond),
		LastRun: "r-9", LastSkip: now.Add(-30 * time.Minute), LastError: "workflow paused",
	}
}
