package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// The seeds' own example workflows run unchanged to the expected end.

func TestSeed000ShellDiamond(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{workers: 2})
	name, v := e.register(readExample(t, "seed-000-example-workflow.json"))
	require.Equal(t, "example_workflow", name)
	st := e.wait(e.start(name, v, `{}`), 30*time.Second)
	require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus], st.Fields[records.FieldError])
	for _, id := range []string{"A", "B", "C", "D"} {
		var out struct {
			ExitCode int    `json:"exit_code"`
			Stdout   string `json:"stdout"`
		}
		require.NoError(t, json.Unmarshal([]byte(st.Outputs[id]), &out), st.Outputs[id])
		require.Equal(t, 0, out.ExitCode)
		require.Equal(t, id+"\n", out.Stdout)
		rec := nodeRecord(t, st, id)
		require.Equal(t, records.NodeSucceeded, rec.State)
		require.NotEmpty(t, rec.Worker)
	}
	a, d := nodeRecord(t, st, "A"), nodeRecord(t, st, "D")
	require.LessOrEqual(t, a.FinishedAt, d.QueuedAt, "D queued before A finished")
}

func TestSeed002OrderProcessing(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{workers: 1})
	name, v := e.register(readExample(t, "seed-002-order-processing.json"))
	st := e.wait(e.start(name, v, `{"order_id":"order-1"}`), 60*time.Second)
	// charge fails with p=0.3 and may retry twice; the simulated outcome is
	// deterministic per attempt, so the run either succeeds or records three
	// failed charge attempts — never anything in between.
	charge := nodeRecord(t, st, "charge")
	switch records.RunStatus(st.Fields[records.FieldStatus]) {
	case records.RunSucceeded:
		for _, id := range []string{"validate", "charge", "ship"} {
			require.Equal(t, records.NodeSucceeded, nodeRecord(t, st, id).State)
			require.NotEmpty(t, st.Outputs[id])
		}
		require.LessOrEqual(t, charge.Attempt, 3)
	case records.RunFailed:
		require.Equal(t, 3, charge.Attempt)
		require.Equal(t, records.NodeSkipped, nodeRecord(t, st, "ship").State)
	default:
		t.Fatalf("unexpected status %v", st.Fields)
	}
	validate := nodeRecord(t, st, "validate")
	require.GreaterOrEqual(t, validate.FinishedAt-validate.StartedAt, int64(2000), "validate simulates 2 s of work")
}

func TestSeed004FanOutFanIn(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{workers: 2})
	name, v := e.register(readExample(t, "seed-004-fan-out-fan-in.json"))
	st := e.wait(e.start(name, v, `{}`), 30*time.Second)
	require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus], st.Fields[records.FieldError])
	var c struct{ Result string }
	require.NoError(t, json.Unmarshal([]byte(st.Outputs["C"]), &c))
	require.Equal(t, "HTTPS://API.EXAMPLE.COM/ORDERS/42", c.Result)
	var b, d struct{ Result, Text string }
	require.NoError(t, json.Unmarshal([]byte(st.Outputs["B"]), &b))
	require.NoError(t, json.Unmarshal([]byte(st.Outputs["D"]), &d))
	require.NotEmpty(t, b.Result)
	// D's prompt was built from both branches' results.
	require.True(t, strings.Contains(d.Text, "HTTPS://API.EXAMPLE.COM/ORDERS/42"), "D text %q lacks C's result", d.Text)
}
