package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// raceReport is what a race-detector build prints when it sees a race.
const raceReport = "WARNING: DATA RACE"

// TestRaceBuiltStackUnderFaults runs the api, two orchestrators and two
// workers built with -race through runs, an orchestrator kill -9 and
// restart and a worker kill -9 and restart, then stops every service
// gracefully: all runs succeed, every process exits cleanly (a race build
// exits 66 when it saw a race) and no process log holds a race report.
// Unit tests run with -race; this is where the races of the real processes
// under fault injection would show.
func TestRaceBuiltStackUnderFaults(t *testing.T) {
	t.Parallel()
	orch, worker, api := raceBin(t, "orchestrator"), raceBin(t, "worker"), raceBin(t, "api")
	f := startFaultStack(t, stackOpts{workers: 2, orchestrators: 2, apiBin: api,
		orchBin: func(int) string { return orch }, workerBin: func(int) string { return worker },
		env: []string{"BRAID_WORKER_CONCURRENCY=8", "BRAID_LOG_LEVEL=info"}})
	c := f.client(t)
	wf := f.register(c, "race", layered(20, 5, 20*time.Millisecond))
	runs := startRuns(c, wf, 8)
	f.waitExecutions(20) // the kills land on runs in flight
	f.kill(f.orchs[0])
	f.restart(f.orchs[0])
	runs = append(runs, startRuns(c, wf, 8)...)
	f.waitExecutions(f.executions() + 20)
	f.kill(f.workerProcs[0])
	f.restart(f.workerProcs[0])
	runs = append(runs, startRuns(c, wf, 8)...)
	f.checkInvariants(runs, 90*time.Second).requireAllSucceeded(t)

	for i := len(f.procs) - 1; i >= 0; i-- { // api first, as the stack stops
		p := f.procs[i]
		require.NoError(t, p.stop(procStopTimeout), "%s did not exit cleanly (66: the race detector fired)", p.name)
	}
	for _, p := range f.procs {
		if log := p.log(); strings.Contains(log, raceReport) {
			i := strings.Index(log, raceReport)
			t.Fatalf("%s: the race detector fired:\n%s", p.name, log[i:min(len(log), i+4000)])
		}
	}
}
