package e2e

import (
	"fmt"
	"os"
	"strings"

	"github.com/braidhq/braid/pkg/handler"
	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// ledgerSlackMs is how long after a node's success was applied an
// execution may still begin: the success is stored a moment after the
// orchestrator applies it (the event's time), and a worker whose claim was
// granted just before that records its start a moment later (a lost
// attempt re-run while the first run's result arrives). Anything later is
// a completed node executed again: the claim refuses a finished node.
const ledgerSlackMs = 500

// execution is one execution of an attempt in the ledger: its start, and
// its end unless its worker was killed first.
type execution struct {
	start, end int64
	ended      bool
	outcome    string
}

// checkLedger checks the executions the workers' simulate handler recorded
// (BRAID_WORKER_LEDGER: a start line before the handler runs, an end line
// with the outcome after) against the runs' final records, directly rather
// than through state transitions:
//   - each claim executes its dispatch at most once: one execution per
//     attempt per worker process, and no two executions of one attempt
//     that both ran to completion overlap in time (a second execution of
//     an attempt is legitimate only once the first's worker was killed,
//     leaving no end, stopped it, ending it "cancelled", or was paused by
//     the test, so that its claim lapsed while it slept);
//   - no execution of an attempt the orchestrator never reached;
//   - no completed node executed again: no execution of a succeeded node
//     or instance began after its success was applied (plus
//     ledgerSlackMs);
//   - the ledger is complete: every succeeded simulate node and instance
//     executed its final attempt.
func (f *faultStack) checkLedger(accepted map[string]string, rep checkReport) {
	t := f.t
	t.Helper()
	execs := f.readLedger(accepted)
	for att, byPID := range execs {
		run, node, inst, attempt := parseAttemptKey(t, att)
		rec, ok := f.recordOf(rep, run, node, inst)
		require.True(t, ok, "ledger: %s has no record", att)
		require.LessOrEqual(t, attempt, rec.Attempt, "%s executed beyond the node's attempt %d", att, rec.Attempt)
		var done []execution
		for pid, e := range byPID {
			if at, ok := rep.SucceededAt[att]; ok && rec.State == records.NodeSucceeded {
				require.LessOrEqual(t, e.start, at+ledgerSlackMs,
					"%s began on pid %d %d ms after its success was applied: a completed node executed again", att, pid, e.start-at)
			}
			if e.ended && e.outcome != "cancelled" && !f.pausedPIDs[pid] {
				done = append(done, *e)
			}
		}
		for i := range done {
			for j := i + 1; j < len(done); j++ {
				a, b := done[i], done[j]
				require.False(t, a.start < b.end && b.start < a.end,
					"%s ran twice at once to completion (%d–%d and %d–%d): a dispatch executed without its claim", att, a.start, a.end, b.start, b.end)
			}
		}
	}
	for run, wf := range accepted {
		for node, rec := range rep.Nodes[run] {
			if f.handlers[wf][node] != "simulate" {
				continue
			}
			if insts, fan := rep.Instances[run][node]; fan {
				for i, ir := range insts {
					if ir.State == records.NodeSucceeded {
						require.Contains(t, execs, attemptKey(run, node, i, ir.Attempt), "run %s node %s instance %d succeeded without an execution in the ledger", run, node, i)
					}
				}
				continue
			}
			if rec.State == records.NodeSucceeded {
				require.Contains(t, execs, attemptKey(run, node, 0, rec.Attempt), "run %s node %s succeeded without an execution in the ledger", run, node)
			}
		}
	}
}

// readLedger reads the ledger's executions of the accepted runs: attempt
// key → worker pid → execution. A second start of one attempt in one
// process fails the test.
func (f *faultStack) readLedger(accepted map[string]string) map[string]map[int]*execution {
	t := f.t
	t.Helper()
	b, err := os.ReadFile(f.ledger)
	if os.IsNotExist(err) {
		b, err = nil, nil // no simulate node ran
	}
	require.NoError(t, err)
	execs := map[string]map[int]*execution{}
	for _, s := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if s == "" {
			continue
		}
		l, err := handler.ParseLedgerLine(s)
		require.NoError(t, err)
		if _, ok := accepted[l.Run]; !ok {
			continue
		}
		att := attemptKey(l.Run, l.Node, l.Instance, l.Attempt)
		if execs[att] == nil {
			execs[att] = map[int]*execution{}
		}
		e := execs[att][l.PID]
		switch l.Phase {
		case handler.LedgerStart:
			require.Nil(t, e, "%s executed twice by worker process %d", att, l.PID)
			execs[att][l.PID] = &execution{start: l.TimeMs}
		case handler.LedgerEnd:
			require.NotNil(t, e, "%s ended on pid %d without a start", att, l.PID)
			e.end, e.ended, e.outcome = l.TimeMs, true, l.Outcome
		}
	}
	return execs
}

// attemptKey names one attempt of one node instance.
func attemptKey(run, node string, inst, attempt int) string {
	return fmt.Sprintf("%s %s %d %d", run, node, inst, attempt)
}

func parseAttemptKey(t require.TestingT, k string) (run, node string, inst, attempt int) {
	_, err := fmt.Sscanf(k, "%s %s %d %d", &run, &node, &inst, &attempt)
	require.NoError(t, err, k)
	return run, node, inst, attempt
}

// recordOf is the final record of run's node (instance inst of a fan-out).
func (f *faultStack) recordOf(rep checkReport, run, node string, inst int) (records.NodeRecord, bool) {
	if insts, ok := rep.Instances[run][node]; ok {
		r, ok := insts[inst]
		return r, ok
	}
	r, ok := rep.Nodes[run][node]
	return r, ok && inst == 0
}
