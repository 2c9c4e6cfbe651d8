package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Seed 002's crash table, as separate processes: each scenario counts how
// often each step's body really ran (a shell step appends its idempotency
// key to a file per execution) and checks that a crash is the system's
// fault: completed steps never run again, an interrupted step runs again
// under the same attempt and key, and no crash costs a retry.

// orderSteps is seed 002's order-processing chain (validate → charge →
// ship) as shell steps without retries that log each execution under dir;
// charge takes chargeFor.
func orderSteps(dir string, chargeFor time.Duration) []faultNode {
	step := func(id string, d time.Duration, deps ...string) faultNode {
		return faultNode{ID: id, Handler: "shell", DependsOn: deps, Config: map[string]any{
			"command": `printf '%s\n' "$BRAID_IDEMPOTENCY_KEY" >> "$LOGDIR/` + id + `.log"; sleep ` + seconds(d),
			"env":     map[string]any{"LOGDIR": dir}}}
	}
	return []faultNode{step("validate", 100*time.Millisecond), step("charge", chargeFor, "validate"), step("ship", 100*time.Millisecond, "charge")}
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// executions reads the idempotency keys step logged, one per execution.
func executions(t *testing.T, dir, step string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, step+".log"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// requireRanOnce checks that each of steps executed exactly once.
func requireRanOnce(t *testing.T, dir string, steps ...string) {
	t.Helper()
	for _, s := range steps {
		require.Len(t, executions(t, dir, s), 1, "step %s", s)
	}
}

// TestCrashMidStepWorker: kill -9 the only worker while charge (no
// retries) runs, restart it under the same id: the restarted worker
// declares its predecessor's attempt lost at once (well before the 5-s
// liveness timeout, and the 30-s heartbeat timeout), charge runs again
// as the same attempt with the same idempotency key, the run succeeds,
// and validate and ship ran once each.
func TestCrashMidStepWorker(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 1})
	c := f.client(t)
	logs := t.TempDir()
	wf := f.register(c, "order", orderSteps(logs, 4*time.Second))
	id := c.start(wf, `{}`)
	c.waitRun(id, runTimeout, "charge running", func(r apiRun) bool { return r.node(t, "charge").State == "running" })
	w := f.workerProcs[0]
	f.kill(w)
	f.restart(w)
	restarted := time.Now()
	c.waitRun(id, 30*time.Second, "charge lost and dispatched again", func(r apiRun) bool { return r.node(t, "charge").Lost == 1 })
	again := time.Since(restarted)
	require.NoError(t, poll(30*time.Second, func() (bool, error) { return len(executions(t, logs, "charge")) == 2, nil }))
	rerun := time.Since(restarted)
	t.Logf("charge declared lost %s and running again %s after the worker's restart", again.Round(time.Millisecond), rerun.Round(time.Millisecond))
	require.Less(t, again, 5*time.Second, "the restart was not recognised: the loss waited for a timeout")
	require.Less(t, rerun, 10*time.Second, "the lost attempt's dispatch was dropped: it waited for the reconciler's re-send")

	rep := f.checkInvariants([]string{id}, runTimeout)
	rep.requireAllSucceeded(t)
	r := c.run(id)
	charge := r.node(t, "charge")
	require.Equal(t, 1, charge.Attempt, "a crash cost a retry")
	require.Equal(t, 1, charge.MaxAttempts)
	require.Equal(t, []string{"lost"}, charge.outcomes())
	require.Equal(t, "lost: worker "+f.Workers[0]+" stopped responding", charge.PastAttempts[0].Error)
	keys := executions(t, logs, "charge")
	require.Equal(t, keys[0], keys[1], "the re-run is the same logical attempt: same idempotency key")
	requireRanOnce(t, logs, "validate", "ship")
}

// TestCrashMidStepDev: the same with the whole `braid dev` killed -9 and
// started again on its data directory: every interrupted task is running
// again within 2 s of "stack is up" (the new incarnations take over their
// predecessors' run locks and leader leases at once, under the same stable
// ids), and the run succeeds.
func TestCrashMidStepDev(t *testing.T) {
	t.Parallel()
	logs := t.TempDir()
	c, id, up := killDevDuring(t, orderSteps(logs, 4*time.Second), "charge running",
		func(r apiRun) bool { return r.node(t, "charge").State == "running" })
	require.NoError(t, poll(30*time.Second, func() (bool, error) { return len(executions(t, logs, "charge")) == 2, nil }))
	again := time.Since(up)
	t.Logf("charge running again %s after braid dev said the stack is up", again.Round(time.Millisecond))
	require.Less(t, again, 2*time.Second, "the restarted stack waited for its predecessor's leases or liveness to time out")
	r := c.waitDone(id, runTimeout)
	require.Equal(t, "succeeded", r.Status, "%+v", r)
	charge := r.node(t, "charge")
	require.Equal(t, 1, charge.Attempt)
	require.Equal(t, []string{"lost"}, charge.outcomes(), "%+v", charge.PastAttempts)
	keys := executions(t, logs, "charge")
	require.Len(t, keys, 2)
	require.Equal(t, keys[0], keys[1])
	requireRanOnce(t, logs, "validate", "ship")
}

// TestCrashBetweenSteps: kill -9 `braid dev` while the run is between two
// steps (a durable wait after validate): after the restart it resumes
// with the next pending step; nothing that completed runs again.
func TestCrashBetweenSteps(t *testing.T) {
	t.Parallel()
	logs := t.TempDir()
	steps := orderSteps(logs, 100*time.Millisecond)
	pause := faultNode{ID: "pause", Handler: "wait", Config: map[string]any{"duration": "3s"}, DependsOn: []string{"validate"}}
	steps[1].DependsOn = []string{"pause"}
	c, id, _ := killDevDuring(t, append(steps, pause), "between validate and charge", func(r apiRun) bool {
		return r.node(t, "validate").State == "succeeded" && r.node(t, "pause").State == "running"
	})
	r := c.waitDone(id, runTimeout)
	require.Equal(t, "succeeded", r.Status, "%+v", r)
	requireRanOnce(t, logs, "validate", "charge", "ship")
	for _, n := range r.Nodes {
		require.Equal(t, 1, n.Attempt, "node %s", n.ID)
		require.Empty(t, n.PastAttempts, "node %s", n.ID)
	}
}

// killDevDuring starts `braid dev`, runs a workflow of nodes, SIGKILLs the
// whole process once the run satisfies cond (what), and starts it again on
// the same data directory. It returns a client of the new stack, the run
// id and when the new stack said it was up.
func killDevDuring(t *testing.T, nodes []faultNode, what string, cond func(apiRun) bool) (*apiClient, string, time.Time) {
	t.Helper()
	dir, dataDir, addrs := t.TempDir(), filepath.Join(t.TempDir(), ".braid"), freeDevAddrs(t)
	d := startDev(t, dir, dataDir, addrs)
	c := d.stack.client(t)
	name, _ := c.register(faultDefinition(wfName(t, "order"), nodes))
	id := c.start(name, `{}`)
	c.waitRun(id, runTimeout, what, cond)
	d.kill()
	d2 := startDev(t, dir, dataDir, addrs)
	return d2.stack.client(t), id, time.Now()
}

// TestCrashAfterResultWorker: the worker is killed right after the broker
// acknowledged charge's result (a failpoints build), before anything else
// it does for the attempt. The result is applied: charge never runs again
// and loses nothing, and ship runs as its first attempt. The result is on
// the broker before its acknowledgement reaches the worker, so the
// orchestrator may dispatch ship and the doomed worker claim it — and, on
// a loaded machine, start it — in that instant: ship then carries one loss
// (a past attempt lost with its worker, which costs no retry) and, if it
// had started, runs again as the same attempt with the same key, as after
// any kill mid-step (a CI run saw that once).
func TestCrashAfterResultWorker(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 1,
		workerBin: func(int) string { return failpointBin(t, "worker") },
		workerEnv: func(int) []string { return []string{"BRAID_FAILPOINT_EXIT_AFTER_RESULT=charge"} }})
	c := f.client(t)
	logs := t.TempDir()
	id := c.start(f.register(c, "order", orderSteps(logs, 100*time.Millisecond)), `{}`)
	w := f.workerProcs[0]
	require.NoError(t, poll(runTimeout, func() (bool, error) { return w.exited(), nil }), "the failpoint did not kill the worker")
	require.Contains(t, w.log(), "failpoint: exiting after a result")
	f.restart(w, "BRAID_FAILPOINT_EXIT_AFTER_RESULT=")
	requireCleanFinish(t, c, id, logs, "ship")
}

// TestCrashAfterResultOrchestrator: the orchestrator is killed right after
// it stored charge's result (a failpoints build), before it published the
// dispatch of ship or committed the result's offset. Its restart re-reads
// the result (a duplicate now), re-sends the stored dispatch of ship, and
// nothing runs twice.
func TestCrashAfterResultOrchestrator(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 1,
		orchBin: func(int) string { return failpointOrchestrator(t) },
		orchEnv: func(int) []string { return []string{"BRAID_FAILPOINT_EXIT_AFTER_WRITE=charge"} }})
	c := f.client(t)
	logs := t.TempDir()
	id := c.start(f.register(c, "order", orderSteps(logs, 100*time.Millisecond)), `{}`)
	o := f.orchs[0]
	require.NoError(t, poll(runTimeout, func() (bool, error) { return o.exited(), nil }), "the failpoint did not kill the orchestrator")
	require.Contains(t, o.log(), "failpoint: exiting after a write")
	f.restart(o, "BRAID_FAILPOINT_EXIT_AFTER_WRITE=")
	requireCleanFinish(t, c, id, logs)
}

// requireCleanFinish waits for run id of orderSteps and checks that it
// succeeded with every step executed exactly once, as its first attempt,
// and nothing lost but, at most once, the nodes of mayLose.
func requireCleanFinish(t *testing.T, c *apiClient, id, logs string, mayLose ...string) {
	t.Helper()
	restarted := time.Now()
	r := c.waitDone(id, runTimeout)
	t.Logf("run done %s after the restart", time.Since(restarted).Round(time.Millisecond))
	require.Equal(t, "succeeded", r.Status, "%+v", r)
	require.Len(t, r.Nodes, 3)
	for _, n := range r.Nodes {
		require.Equal(t, 1, n.Attempt, "node %s", n.ID)
		if n.Lost > 0 && slices.Contains(mayLose, n.ID) {
			// Lost with the killed worker: run once more as the same attempt
			// if the killed worker had started it, never a second attempt.
			runs := executions(t, logs, n.ID)
			t.Logf("node %s was claimed by the killed worker and lost with it (%d executions): %+v", n.ID, len(runs), n.PastAttempts)
			require.Equal(t, 1, n.Lost, "node %s", n.ID)
			require.Equal(t, []string{"lost"}, n.outcomes(), "node %s: %+v", n.ID, n.PastAttempts)
			require.NotEmpty(t, runs, "node %s never ran", n.ID)
			require.LessOrEqual(t, len(runs), 2, "node %s: %v", n.ID, runs)
			for _, k := range runs {
				require.Equal(t, runs[0], k, "node %s: every execution is the same attempt, with its key", n.ID)
			}
			continue
		}
		requireRanOnce(t, logs, n.ID)
		require.Zero(t, n.Lost, "node %s", n.ID)
		require.Empty(t, n.PastAttempts, "node %s", n.ID)
	}
}

// TestPermanentFailureRunsExactlyItsAttempts: seed 002's permanent failure
// (fail_probability 1.0, max_retries 2) makes exactly three attempts, each
// in the node's attempt history, and fails the run.
func TestPermanentFailureRunsExactlyItsAttempts(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	def := []byte(`{"name": "` + wfName(t, "perm") + `", "steps": [
		{"id": "validate", "type": "task", "config": {"duration_seconds": 0.05, "fail_probability": 0.0, "max_retries": 0}},
		{"id": "charge", "type": "task", "config": {"duration_seconds": 0.05, "fail_probability": 1.0, "max_retries": 2},
		 "depends_on": ["validate"]}]}`)
	name, _ := c.register(def)
	r := c.waitDone(c.start(name, `{}`), runTimeout)
	require.Equal(t, "failed", r.Status)
	charge := r.node(t, "charge")
	require.Equal(t, 3, charge.Attempt)
	require.Equal(t, 3, charge.MaxAttempts)
	require.Equal(t, []string{"failed", "failed"}, charge.outcomes(), "attempts 1 and 2 failed and were retried; 3 is the node's own")
	require.Equal(t, 1, r.node(t, "validate").Attempt)
}

// TestRetrySuccess: a step that fails on its first execution and succeeds
// on its second runs exactly twice, as attempts 1 and 2, with two keys.
func TestRetrySuccess(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	logs := t.TempDir()
	node := faultNode{ID: "flaky", Handler: "shell", Retry: map[string]any{"max_attempts": 3, "initial_interval": "100ms"},
		Config: map[string]any{
			"command": `printf '%s\n' "$BRAID_IDEMPOTENCY_KEY" >> "$LOGDIR/flaky.log"; test "$BRAID_ATTEMPT" -ge 2`,
			"env":     map[string]any{"LOGDIR": logs}}}
	name, _ := c.register(faultDefinition(wfName(t, "retry"), []faultNode{node}))
	r := c.waitDone(c.start(name, `{}`), runTimeout)
	require.Equal(t, "succeeded", r.Status)
	keys := executions(t, logs, "flaky")
	require.Len(t, keys, 2)
	require.NotEqual(t, keys[0], keys[1], "each attempt has its own idempotency key")
	require.Equal(t, 2, r.node(t, "flaky").Attempt)
	require.Equal(t, []string{"failed"}, r.node(t, "flaky").outcomes())
}

// faultDefinition is a workflow definition of nodes named name.
func faultDefinition(name string, nodes []faultNode) []byte {
	b, _ := json.Marshal(map[string]any{"name": name, "nodes": nodes})
	return b
}
