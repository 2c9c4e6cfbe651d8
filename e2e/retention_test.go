package e2e

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestRunRetentionDeletesEndedRuns runs the process stack with
// BRAID_RUN_RETENTION=2s: runs that ended (a fan-out whose instances log,
// one that failed after a retry) are deleted a few seconds later — the api
// answers 404, and not one Redis key of theirs nor an index entry is left
// — while a run that waits for an approval, older than the retention, is
// kept whole and still completes once approved.
func TestRunRetentionDeletesEndedRuns(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 1, env: []string{"BRAID_RUN_RETENTION=2s"}})
	c := f.client(t)
	fan := f.register(c, "retained", []faultNode{
		{ID: "list", Handler: "noop", Config: map[string]any{"xs": []int{1, 2, 3}}},
		{ID: "each", Handler: "shell", DependsOn: []string{"list"}, Foreach: "<< list.xs >>",
			Config: map[string]any{"command": "echo item << item >>"}},
	})
	failing := f.register(c, "retfail", []faultNode{{ID: "no", Handler: "shell",
		Retry: map[string]any{"max_attempts": 2, "initial_interval": "10ms"}, Config: map[string]any{"command": "echo trying; exit 3"}}})
	gated := f.register(c, "retgate", []faultNode{
		{ID: "gate", Handler: "approval", Config: map[string]any{"message": "go?"}},
		{ID: "after", Handler: "noop", DependsOn: []string{"gate"}},
	})
	keysOf := func(run string) []string {
		t.Helper()
		var out []string
		iter := f.rdb.Scan(f.ctx(10*time.Second), 0, f.keys.RunPattern(run), 1000).Iterator()
		for iter.Next(context.Background()) {
			out = append(out, iter.Val())
		}
		require.NoError(t, iter.Err())
		return out
	}
	indexed := func(run string) bool {
		err := f.rdb.ZScore(f.ctx(5*time.Second), f.keys.AllRunsOf(run), run).Err()
		if err != nil {
			require.ErrorIs(t, err, redis.Nil)
		}
		return err == nil
	}

	gate := c.start(gated, `{}`)
	ended := []string{c.start(fan, `{}`), c.start(failing, `{}`)}
	require.Equal(t, "succeeded", c.waitDone(ended[0], runTimeout).Status)
	require.Equal(t, "failed", c.waitDone(ended[1], runTimeout).Status)
	c.waitRun(gate, runTimeout, "gate awaiting approval", func(r apiRun) bool { return r.node(t, "gate").WaitingReason == "awaiting approval" })
	logs := f.keys.Logs(ended[0], "each", 2, 1)
	require.Contains(t, keysOf(ended[0]), logs, "the fan-out's instances logged")
	require.Contains(t, keysOf(ended[1]), f.keys.Logs(ended[1], "no", 0, 2), "the failed run's second attempt logged")

	for _, id := range ended {
		err := poll(30*time.Second, func() (bool, error) {
			status, _, err := c.raw(http.MethodGet, "/runs/"+url.PathEscape(id), nil)
			return err == nil && status == http.StatusNotFound && len(keysOf(id)) == 0 && !indexed(id), nil
		})
		require.NoError(t, err, "run %s still there: keys %v, indexed %v", id, keysOf(id), indexed(id))
	}
	require.True(t, indexed(gate))
	require.Equal(t, "running", c.run(gate).Status, "a run older than the retention that has not ended is kept")
	c.call(http.MethodPost, "/runs/"+url.PathEscape(gate)+"/tasks/gate/approve", []byte(`{}`), http.StatusAccepted, nil)
	require.Equal(t, "succeeded", c.waitDone(gate, runTimeout).Status)
}
