package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReconcilerFailsAttemptsWhoseHeartbeatsStop runs one worker process
// (default heartbeat interval, 5 s) and an attempt of a node whose
// heartbeat timeout is one second: while the worker runs, the attempt
// keeps its claim; SIGSTOPped, its heartbeats really stop, and the
// reconciler must fail the attempt with a heartbeat timeout and retry it;
// the worker, continued, learns that attempt 1 moved on and runs attempt 2,
// which is stopped the same way; with no attempts left the run fails.
func TestReconcilerFailsAttemptsWhoseHeartbeatsStop(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 1, env: []string{"BRAID_RECONCILE_EVERY=300ms"}})
	c := f.client(t)
	wf := f.register(c, "silent", []faultNode{{ID: "stuck", Handler: "simulate",
		Config: map[string]any{"duration": "1h"}, HeartbeatTimeout: "1s",
		Retry: map[string]any{"max_attempts": 2, "initial_interval": "100ms"}}})
	id := c.start(wf, `{}`)
	worker := f.workerProcs[0]
	for attempt := 1; attempt <= 2; attempt++ {
		c.waitRun(id, runTimeout, "stuck running", func(r apiRun) bool {
			n := r.node(t, "stuck")
			return n.State == "running" && n.Attempt == attempt
		})
		if attempt == 1 {
			// A worker that runs keeps its claim alive, whatever its
			// heartbeat interval (5 s here): the attempt is not failed.
			f.hold(3 * time.Second)
			n := c.run(id).node(t, "stuck")
			require.Equal(t, "running", n.State, "a live attempt was failed: %s", n.Error)
			require.Equal(t, 1, n.Attempt, "a live attempt was failed")
		}
		f.pause(worker)
		c.waitRun(id, 30*time.Second, "attempt failed by the reconciler", func(r apiRun) bool {
			n := r.node(t, "stuck")
			return n.Attempt > attempt || r.Status == "failed"
		})
		f.resume(worker)
	}
	rep := f.checkInvariants([]string{id}, 30*time.Second)
	rec := rep.Nodes[id]["stuck"]
	require.Equal(t, 2, rec.Attempt)
	require.Contains(t, rec.Error, "heartbeat timeout: worker "+f.Workers[0]+" stopped responding")
	require.Len(t, grep(rep.History[id], "lost its worker "+f.Workers[0]), 2, "%v", rep.History[id])
	require.Equal(t, "failed", c.run(id).Status)
}
