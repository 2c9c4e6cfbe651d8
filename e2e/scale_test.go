package e2e

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/runstate"
	"github.com/stretchr/testify/require"
)

// TestScaleWorkers1To4To2 runs the compose file's topology as local
// processes (separate api, two orchestrators, workers) under a steady
// stream of runs, scaling the workers 1 → 4 → 2: the added workers take
// their share (every worker completes tasks), the two stopped with SIGTERM
// hand back what they run, and nothing is lost or completed twice. It logs
// the tasks completed per second in each phase (`make bench` measures
// throughput; this test asserts only correctness).
func TestScaleWorkers1To4To2(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 1, orchestrators: 2})
	c := f.client(t)
	wf := f.register(c, "scale", layered(10, 2, 100*time.Millisecond))
	phase := scale(4*time.Second, 10*time.Second)
	var ids []string
	// load starts about 40 tasks/s (what one worker, 4 at once, can run)
	// for d; stopped are the processes meant to be gone meanwhile.
	load := func(d time.Duration, stopped ...*proc) {
		end := time.Now().Add(d)
		for time.Now().Before(end) {
			ids = append(ids, c.start(wf, `{}`))
			f.hold(250*time.Millisecond, stopped...)
		}
	}
	start := time.Now()
	load(phase)
	one := time.Now()
	for range 3 {
		f.addWorker(t)
	}
	load(phase)
	four := time.Now()
	stopped := f.workerProcs[2:]
	for _, w := range stopped {
		t.Logf("scale: SIGTERM %s pid=%d", w.name, w.pid())
		require.NoError(t, w.stop(procStopTimeout), "%s did not drain cleanly", w.name)
	}
	load(phase, stopped...)
	rep := f.checkInvariants(ids, 2*time.Minute)
	rep.requireAllSucceeded(t)

	byWorker := map[string]int{}
	var finished []int64
	lost := 0
	for id, nodes := range rep.Nodes {
		for node, rec := range nodes {
			require.Equal(t, 1, rec.Attempt, "run %s node %s: scaling cost a retry", id, node)
			for _, p := range rec.Past {
				// Handed back by a draining worker; or lost: while the
				// workers' group rebalances after the joins, kfake served the
				// orchestrators nothing for up to ~9 s (seen in CI), so a
				// stopped worker's published result could arrive after its
				// liveness lapsed. Either way the same attempt ran again or
				// its re-dispatch was dropped as finished: no retry spent,
				// nothing completed twice.
				require.Contains(t, []runstate.Outcome{runstate.OutcomeHandedBack, runstate.OutcomeLost}, p.Outcome, "run %s node %s", id, node)
				if p.Outcome == runstate.OutcomeLost {
					lost++
				}
			}
			byWorker[rec.Worker]++
			finished = append(finished, rec.FinishedAt)
		}
	}
	for _, w := range f.Workers {
		require.Positive(t, byWorker[w], "worker %s completed no task: %v", w, byWorker)
	}
	sort.Slice(finished, func(i, j int) bool { return finished[i] < finished[j] })
	rate := func(from, to time.Time) string {
		n := 0
		for _, ms := range finished {
			if ms >= from.UnixMilli() && ms < to.UnixMilli() {
				n++
			}
		}
		return fmt.Sprintf("%.0f tasks/s", float64(n)/to.Sub(from).Seconds())
	}
	t.Logf("%d runs, %d tasks (%d recorded lost); per worker %v; 1 worker: %s, 4 workers: %s, 2 workers: %s", len(ids), len(finished), lost, byWorker,
		rate(start, one), rate(one, four), rate(four, time.Now()))
}
