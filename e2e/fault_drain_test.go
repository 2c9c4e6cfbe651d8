package e2e

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFaultOrchestratorSIGTERMPublishes kills the broker while the
// orchestrator has a batch in hand, so that the batch's publish fails and
// is retried; sends the orchestrator SIGTERM while the broker is still
// down; then restarts the broker on its data directory within the
// orchestrator's drain timeout. The batch's messages must be published
// before the orchestrator exits (it never logs giving them up), so that
// once it is started again every run finishes and no run's history shows
// the reconciler re-sending a dispatch after core.RedispatchAfter (30 s). An orchestrator that gave the
// publish up at SIGTERM lost that batch's dispatches and run events until
// that repair: re-consuming the batch brings nothing back, its events
// being duplicates once its state is stored.
//
// The orchestrator is the failpoints build (see
// TestFaultFenceRejectsPausedOrchestrator): it holds its first write of an
// existing run that dispatches tasks, the broker is killed meanwhile, and a short SIGSTOP and
// SIGCONT lets the write go on, so the batch in hand is certain.
func TestFaultOrchestratorSIGTERMPublishes(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 2,
		env:     []string{"BRAID_ORCHESTRATOR_DRAIN_TIMEOUT=30s"},
		orchBin: func(int) string { return failpointOrchestrator(t) },
		orchEnv: func(int) []string { return []string{holdWriteEnv} }})
	c := f.client(t)
	wf := f.register(c, "drainpub", layered(40, 4, 50*time.Millisecond))
	orch := f.orchs[0]
	ids := startRuns(c, wf, scale(6, 20))
	run := heldWrite(orch, 30*time.Second)
	require.NotEmpty(t, run, "the orchestrator held no write")
	failures := func() int { return strings.Count(orch.log(), `"msg":"publish failed; retrying"`) }
	before := failures()
	f.kill(f.broker)
	f.pause(orch)
	f.hold(3*time.Second, orch, f.broker) // the failpoint lets the write go after a pause of 2 s
	f.resume(orch)
	require.NoError(t, poll(30*time.Second, func() (bool, error) { return failures() > before, nil }),
		"run %s: the held batch's publish did not fail with the broker down", run)

	t.Logf("fault: SIGTERM %s pid=%d", orch.name, orch.pid())
	require.NoError(t, orch.signal(syscall.SIGTERM))
	after := failures()
	gaveUp := func() bool { return strings.Contains(orch.log(), "unpublished messages; the reconciler") }
	require.NoError(t, poll(30*time.Second, func() (bool, error) { return failures() > after || gaveUp() || orch.exited(), nil }),
		"the orchestrator neither retried its publish after SIGTERM nor gave it up")
	f.restart(f.broker)
	require.NoError(t, orch.wait(60*time.Second), "the orchestrator did not exit cleanly")
	f.restart(orch, "BRAID_FAILPOINT_HOLD_WRITE=") // no held write this time
	rep := f.checkInvariants(ids, 90*time.Second)
	rep.requireAllSucceeded(t)
	for id, hist := range rep.History {
		// The restarted orchestrator takes every run over and re-sends at
		// once what is queued and unclaimed ("(run taken over)"): harmless
		// duplicates. A lost batch shows as the 30-s repair instead.
		waited := slices.DeleteFunc(grep(hist, "re-dispatched unclaimed"), func(l string) bool { return strings.HasSuffix(l, "(run taken over)") })
		require.Empty(t, waited, "run %s waited for the reconciler", id)
	}
	require.False(t, gaveUp(), "the orchestrator gave its publish up")
}
