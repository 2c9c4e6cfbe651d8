package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReconcilerLosesAttemptsOfAFrozenWorker runs one worker process
// (liveness timeout 1 s) and a node without retries whose heartbeat
// timeout is one second: while the worker runs, the attempt keeps its
// claim; SIGSTOPped, the worker's liveness and claims lapse, and the
// reconciler declares the attempt lost — not failed — and dispatches the
// same attempt again. Continued, the worker finishes it (its re-dispatch
// is the same attempt, which it already runs) and the run succeeds with
// one attempt and one loss.
func TestReconcilerLosesAttemptsOfAFrozenWorker(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 1, env: []string{"BRAID_RECONCILE_EVERY=300ms", "BRAID_WORKER_LIVENESS_TIMEOUT=1s"}})
	c := f.client(t)
	wf := f.register(c, "frozen", []faultNode{{ID: "stuck", Handler: "simulate",
		Config: map[string]any{"duration": "6s"}, HeartbeatTimeout: "1s"}})
	id := c.start(wf, `{}`)
	worker := f.workerProcs[0]
	c.waitRun(id, runTimeout, "stuck running", func(r apiRun) bool { return r.node(t, "stuck").State == "running" })
	// A worker that runs keeps its claim alive, whatever its heartbeat
	// interval (5 s here): the attempt is not lost.
	f.hold(2 * time.Second)
	n := c.run(id).node(t, "stuck")
	require.Equal(t, "running", n.State, "a live attempt was lost: %+v", n)
	require.Zero(t, n.Lost)
	f.pause(worker)
	c.waitRun(id, 30*time.Second, "attempt lost by the reconciler", func(r apiRun) bool { return r.node(t, "stuck").Lost == 1 })
	f.resume(worker)
	rep := f.checkInvariants([]string{id}, 60*time.Second)
	rep.requireAllSucceeded(t)
	rec := rep.Nodes[id]["stuck"]
	require.Equal(t, 1, rec.Attempt, "a lost attempt consumed a retry")
	require.Len(t, grep(rep.History[id], "node stuck attempt 1 lost: worker "+f.Workers[0]+" stopped responding (loss 1 of 3)"), 1, "%v", rep.History[id])
}

// TestWorkerDeathIsRepairedAheadOfWaitingRuns: with 4,000 runs waiting on
// approvals and the reconciler slowed to 20 runs a second, an attempt
// whose worker froze (SIGSTOP) is declared lost within seconds of its
// liveness lapsing: the pass the death asks for walks the busy runs only.
// When the reconciler walked every active run, that pass reached the
// attempt's run after up to 200 s (4,001 runs at 20 a second, in ZSCAN's
// order): within the 10 s allowed here about one time in twenty.
func TestWorkerDeathIsRepairedAheadOfWaitingRuns(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 1, env: []string{"BRAID_RECONCILE_EVERY=1s", "BRAID_RECONCILE_RATE=20", "BRAID_WORKER_LIVENESS_TIMEOUT=1s"}})
	c := f.client(t)
	gated := f.register(c, "gated", []faultNode{{ID: "gate", Handler: "approval"}, {ID: "b", Handler: "noop", DependsOn: []string{"gate"}}})
	const waiting = 4000
	for range waiting {
		c.start(gated, `{}`)
	}
	wf := f.register(c, "frozen", []faultNode{{ID: "stuck", Handler: "simulate",
		Config: map[string]any{"duration": "3s"}, HeartbeatTimeout: "1s"}})
	id := c.start(wf, `{}`)
	worker := f.workerProcs[0]
	c.waitRun(id, runTimeout, "stuck running", func(r apiRun) bool { return r.node(t, "stuck").State == "running" })
	f.pause(worker)
	paused := time.Now()
	c.waitRun(id, 10*time.Second, "attempt lost by the reconciler ahead of the waiting runs", func(r apiRun) bool { return r.node(t, "stuck").Lost == 1 })
	t.Logf("attempt declared lost %s after its worker froze, %d runs waiting", time.Since(paused).Round(time.Millisecond), waiting)
	f.resume(worker)
	r := c.waitRun(id, runTimeout, "run succeeded", func(r apiRun) bool { return r.Status == "succeeded" })
	require.Equal(t, 1, r.node(t, "stuck").Attempt, "a lost attempt consumed a retry")
}
