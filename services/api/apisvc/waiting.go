package apisvc

import (
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
)

// waitCtx is the run-wide state waiting reasons depend on.
type waitCtx struct {
	status  records.RunStatus
	started bool // the orchestrator has created the node records
	paused  bool
	now     time.Time
	// offers reports whether a live worker offers a handler (nil: unknown).
	offers func(handler string) bool
}

// waitingReason says why node i of g, with records recs, is not running,
// or "" when it is running or finished, or the run is over.
func waitingReason(g *dag.Graph, i int, recs []records.NodeRecord, w waitCtx) string {
	rec := recs[i]
	if reason := fanOutReason(g.Def.Nodes[i], rec); reason != "" && !w.status.Terminal() {
		if w.paused {
			return "run paused"
		}
		return reason
	}
	if rec.State == records.NodeRunning || rec.State.Terminal() || w.status.Terminal() {
		return ""
	}
	switch {
	case !w.started:
		return "run not started yet: waiting for the orchestrator"
	case w.status == records.RunPending:
		// Recorded but not started: only a run held by its workflow's cap.
		return "workflow concurrency: waiting for a free slot"
	case w.status == records.RunCancelling:
		return "run cancelling"
	case rec.State == records.NodeQueued:
		return queuedReason(g.Def.Nodes[i].Handler, w)
	case w.paused:
		return "run paused"
	case rec.State == records.NodeRetryWait:
		return "retry backoff until " + formatMs(rec.RetryAt)
	}
	var waiting []string
	for _, p := range g.Parents[i] {
		if !recs[p].State.Terminal() {
			waiting = append(waiting, g.Def.Nodes[p].ID)
		}
	}
	if len(waiting) > 0 {
		return "waiting for parents: " + strings.Join(waiting, ", ")
	}
	return "waiting to be scheduled"
}

// queuedReason explains a dispatched node no worker has started.
func queuedReason(handler string, w waitCtx) string {
	if handler == "approval" {
		return "awaiting approval"
	}
	if w.offers != nil && !w.offers(handler) {
		return "no live worker offers handler " + handler
	}
	return "queued: waiting for a worker"
}
