package e2e

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/handler"
	"github.com/braidhq/braid/pkg/records"
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
	var added []*proc
	for range 3 {
		added = append(added, f.addWorker(t))
	}
	for _, p := range added {
		f.waitJoined(p)
	}
	load(phase)
	// Every worker takes its share: the load goes on (bounded) until each
	// has started a task (the execution ledger), however long the group's
	// rebalance kept the new ones idle on a loaded machine.
	deadline := time.Now().Add(scaleJoinBound)
	for !f.ledgerHasAll(f.Workers) && time.Now().Before(deadline) {
		load(250 * time.Millisecond)
	}
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
				require.Contains(t, []records.Outcome{records.OutcomeHandedBack, records.OutcomeLost}, p.Outcome, "run %s node %s", id, node)
				if p.Outcome == records.OutcomeLost {
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

// scaleJoinBound bounds how long the scaling test keeps loading the four
// workers until each has started a task.
const scaleJoinBound = 30 * time.Second

// executions counts the executions started in the ledger so far.
func (f *faultStack) executions() int {
	b, _ := os.ReadFile(f.ledger) // not written yet: none
	return strings.Count(string(b), "\t"+handler.LedgerStart+"\t")
}

// waitExecutions waits until the ledger holds at least n started
// executions.
func (f *faultStack) waitExecutions(n int) {
	f.t.Helper()
	require.NoError(f.t, poll(30*time.Second, func() (bool, error) { return f.executions() >= n, nil }),
		"fewer than %d executions started", n)
}

// ledgerHasAll reports whether every worker in workers has started at
// least one execution in the ledger.
func (f *faultStack) ledgerHasAll(workers []string) bool {
	b, err := os.ReadFile(f.ledger)
	if err != nil {
		return false
	}
	seen := map[string]bool{}
	for _, s := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l, err := handler.ParseLedgerLine(s); err == nil && l.Phase == handler.LedgerStart {
			seen[l.Worker] = true
		}
	}
	for _, w := range workers {
		if !seen[w] {
			return false
		}
	}
	return true
}
