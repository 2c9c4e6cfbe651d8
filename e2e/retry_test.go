package e2e

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// TestRetriesBackOffOnDurableTimers fails a node on every attempt and checks
// it was tried max_attempts times, each attempt after its backoff, before
// the run failed and the downstream node was skipped.
func TestRetriesBackOffOnDurableTimers(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{workers: 1})
	name, v := e.register([]byte(`{"name":"always-fails","nodes":[
	  {"id":"flaky","handler":"shell","config":{"command":"echo attempt $BRAID_ATTEMPT >&2; exit 3"},
	   "retry":{"max_attempts":3,"backoff":"exponential","initial_interval":"200ms","multiplier":2}},
	  {"id":"after","handler":"noop","depends_on":["flaky"]}]}`))
	id := e.start(name, v, `{}`)
	st := e.wait(id, 30*time.Second)
	require.Equal(t, string(records.RunFailed), st.Fields[records.FieldStatus])
	flaky := nodeRecord(t, st, "flaky")
	require.Equal(t, records.NodeFailed, flaky.State)
	require.Equal(t, 3, flaky.Attempt)
	require.Contains(t, flaky.Error, "exit code 3")
	after := nodeRecord(t, st, "after")
	require.Equal(t, records.NodeSkipped, after.State)
	require.True(t, after.UpstreamFailed)
	hist, err := e.rdb.LRange(context.Background(), e.keys.History(id), 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, grep(hist, "node flaky attempt"), 3, "every failed attempt is in the history: %v", hist)
	logs, err := e.rdb.LRange(context.Background(), e.keys.Logs(id, "flaky", 0, 3), 0, -1).Result()
	require.NoError(t, err)
	require.NotEmpty(t, grep(logs, "attempt 3"), "attempt 3's stderr is in its log: %v", logs)
	// The backoff (200ms then 400ms, ±0 jitter) separates the attempts.
	created, err := strconv.ParseInt(st.Fields[records.FieldCreated], 10, 64)
	require.NoError(t, err)
	require.GreaterOrEqual(t, flaky.FinishedAt-created, int64(600))
}

// TestTimeoutKillsAndRetries checks that a shell node over its timeout is
// killed by the worker, retried, and fails with a timeout error.
func TestTimeoutKillsAndRetries(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{workers: 1})
	name, v := e.register([]byte(`{"name":"slow","nodes":[
	  {"id":"sleepy","handler":"shell","config":{"command":"sleep 30"},"timeout":"500ms",
	   "retry":{"max_attempts":2,"initial_interval":"100ms"}}]}`))
	start := time.Now()
	st := e.wait(e.start(name, v, `{}`), 20*time.Second)
	require.Less(t, time.Since(start), 15*time.Second, "the sleeps were not killed")
	require.Equal(t, string(records.RunFailed), st.Fields[records.FieldStatus])
	rec := nodeRecord(t, st, "sleepy")
	require.Equal(t, 2, rec.Attempt)
	require.Contains(t, rec.Error, "timed out")
}

// TestWhenAndTriggerRules runs a branch that only fires on failure and a
// condition over an upstream output.
func TestWhenAndTriggerRules(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{workers: 1})
	name, v := e.register([]byte(`{"name":"branches","nodes":[
	  {"id":"counter","handler":"noop","config":{"n":7}},
	  {"id":"big","handler":"noop","depends_on":["counter"],"when":"counter.n > 5","config":{"msg":"big << counter.n >>"}},
	  {"id":"small","handler":"noop","depends_on":["counter"],"when":"counter.n <= 5"},
	  {"id":"on_fail","handler":"noop","depends_on":["counter"],"trigger_rule":"one_failed"},
	  {"id":"done","handler":"noop","depends_on":["big","small","on_fail"],"trigger_rule":"none_failed",
	   "config":{"big":"<< big.msg >>"}}]}`))
	st := e.wait(e.start(name, v, `{}`), 30*time.Second)
	require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus], st.Fields[records.FieldError])
	require.Equal(t, records.NodeSucceeded, nodeRecord(t, st, "big").State)
	require.True(t, nodeRecord(t, st, "small").WhenSkipped)
	require.Equal(t, records.NodeSkipped, nodeRecord(t, st, "on_fail").State)
	var done map[string]string
	require.NoError(t, json.Unmarshal([]byte(st.Outputs["done"]), &done))
	require.Equal(t, "big 7", done["big"])
}

func grep(lines []string, sub string) []string {
	var out []string
	for _, l := range lines {
		if contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
