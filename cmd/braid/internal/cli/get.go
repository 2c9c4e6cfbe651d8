package cli

import (
	"cmp"
	"strconv"
	"time"

	"github.com/braidhq/braid/cmd/braid/internal/client"
	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/spf13/cobra"
)

func newGetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "get RUN",
		Short: "Show a run and each node's state, attempt, queue wait, duration, worker and waiting reason or error",
		Args:  exactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			run, raw, err := c.GetRun(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.json() {
				return a.writeRaw(raw)
			}
			return a.printRun(run)
		},
	}
}

// printRun prints the run's header and its nodes table.
func (a *app) printRun(run client.Run) error {
	now := time.Now()
	a.printf("run       %s\n", run.ID)
	a.printf("workflow  %s (version %d)\n", run.Workflow, run.Version)
	a.printf("status    %s\n", run.Status)
	a.printf("created   %s   started %s   finished %s   duration %s\n",
		stamp(run.CreatedAt.Time), stamp(run.StartedAt.Time), stamp(run.FinishedAt.Time), human(span(run.StartedAt, run.FinishedAt, now)))
	if run.Error != "" {
		a.printf("error     %s\n", run.Error)
	}
	a.printf("\n")
	t := newTable(a.out, "NODE", "STATE", "ATTEMPT", "WAIT", "DURATION", "WORKER", "DETAIL")
	for _, n := range run.Nodes {
		t.row(n.ID, n.State, attemptOf(n), millis(n.QueueWaitMs), millis(n.DurationMs), dash(n.Worker), dash(nodeDetail(n)))
	}
	if err := t.flush(); err != nil {
		return err
	}
	a.printHistory(run.Nodes)
	return nil
}

// attemptOf shows "2/3" (attempt of the policy's attempts), "-" before the
// first dispatch.
func attemptOf(n client.Node) string {
	if n.MaxAttempts <= 0 || n.Attempt <= 0 {
		return attempt(n.Attempt)
	}
	return strconv.Itoa(n.Attempt) + "/" + strconv.Itoa(n.MaxAttempts)
}

// printHistory lists the earlier runs of attempts of the nodes that have
// any: losses with their worker, failures that were retried, hand-backs.
func (a *app) printHistory(nodes []client.Node) {
	first := true
	for _, n := range nodes {
		for _, p := range n.PastAttempts {
			if first {
				a.printf("\nattempt history\n")
				first = false
			}
			a.printf("  %s attempt %d %s%s: %s\n", n.ID, p.Attempt, p.Outcome, pastTimes(p), dash(p.Error))
		}
	}
}

// millis formats an api figure in ms for tables: absent is "-", 0 is "0s".
func millis(ms *int64) string {
	if ms == nil {
		return "-"
	}
	if *ms <= 0 {
		return "0s"
	}
	return human(time.Duration(*ms) * time.Millisecond)
}

// pastTimes is " (waited W, ran D)" for an earlier attempt with figures.
// A lost attempt's D runs until the loss was noticed (the worker's
// heartbeat timeout later, or after an outage of the whole stack, its
// end), not until the worker died, and says so.
func pastTimes(p apiwire.PastAttempt) string {
	switch {
	case p.QueueWaitMs != nil && p.DurationMs != nil && p.Outcome == "lost":
		return " (waited " + millis(p.QueueWaitMs) + ", lost " + millis(p.DurationMs) + " after it started)"
	case p.QueueWaitMs != nil && p.DurationMs != nil:
		return " (waited " + millis(p.QueueWaitMs) + ", ran " + millis(p.DurationMs) + ")"
	case p.QueueWaitMs != nil:
		return " (waited " + millis(p.QueueWaitMs) + ", never started)"
	}
	return ""
}

// nodeDetail is a node's error when it has one, else why it is waiting
// (with an approval node's message while it awaits a decision), else why it
// ended as it did (e.g. skipped by its when condition), else a fan-out
// node's instance counts.
func nodeDetail(n client.Node) string {
	waiting := n.WaitingReason
	if n.State == "queued" && n.ApprovalMessage != "" && waiting != "" {
		waiting += ": " + strconv.Quote(n.ApprovalMessage)
	}
	return cmp.Or(n.Error, waiting, n.Reason, instanceCounts(n.Instances))
}

// instanceCounts is "4 instances: 3 succeeded, 1 running" (the states with
// any), "" for a node that is not a fan-out.
func instanceCounts(c *apiwire.InstanceCounts) string {
	if c == nil {
		return ""
	}
	s := strconv.Itoa(c.Total) + " instances"
	sep := ": "
	for _, st := range []struct {
		n    int
		name string
	}{{c.Succeeded, "succeeded"}, {c.Running, "running"}, {c.Pending, "pending"}, {c.Failed, "failed"}, {c.Cancelled, "cancelled"}} {
		if st.n > 0 {
			s += sep + strconv.Itoa(st.n) + " " + st.name
			sep = ", "
		}
	}
	return s
}

// attempt shows 0 as "-".
func attempt(n int) string {
	if n <= 0 {
		return "-"
	}
	return strconv.Itoa(n)
}
