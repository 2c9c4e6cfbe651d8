package apisvc

import (
	"context"
	"time"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/gin-gonic/gin"
)

// getRun returns a run with every node's state, attempt, timings and error.
// With ?wait=D it answers once the run has ended, or after D with the run
// as it is then.
func (s *Server) getRun(c *gin.Context) {
	id, err := runParam(c)
	var wait time.Duration
	if err == nil {
		wait, err = waitQuery(c)
	}
	if err == nil && wait > 0 {
		s.answerRun(c, id, wait)
		return
	}
	r, ctx, cancel := s.runFor(c, id, err)
	defer cancel()
	if r == nil {
		return
	}
	run := s.viewRun(ctx, r, time.Now())
	respondWithRun(c, &run)
}

// viewRun builds the view of a loaded run: the body of GET /runs/{id} and
// of the SSE snapshot event.
func (s *Server) viewRun(ctx context.Context, r *loadedRun, now time.Time) apiwire.Run {
	sum := summarize(r.id, r.stored.Fields)
	v := apiwire.Run{RunSummary: sum, Seq: r.seq(), Input: r.input(), Nodes: make([]apiwire.Node, len(r.nodes)),
		DurationMs: durationMs(parseMs(r.field(records.FieldStarted)), parseMs(r.field(records.FieldFinished)), now)}
	var offers func(string) bool
	for _, rec := range r.nodes {
		if rec.State == records.NodeQueued {
			offers = s.handlerOffers(ctx, now)
			break
		}
	}
	w := r.waitContext(now, offers)
	for i, n := range r.graph.Def.Nodes {
		deps := n.DependsOn // shared with the cached graph: the view only reads it
		if deps == nil {
			deps = []string{} // "depends_on": [], not null
		}
		v.Nodes[i] = apiwire.Node{ID: n.ID, DependsOn: deps, NodeFields: viewNode(n, r.nodes[i], now)}
		v.Nodes[i].WaitingReason = waitingReason(r.graph, i, r.nodes, w)
		v.Nodes[i].Instances = countsOf(r.nodes[i])
	}
	return v
}

// viewNode renders one record (a node's, or one of its instances') of node n.
func viewNode(n dag.Node, rec records.NodeRecord, now time.Time) apiwire.NodeFields {
	finished := rec.FinishedAt
	if !rec.State.Terminal() {
		finished = 0
	}
	wait, run := attemptTiming(rec, n.Handler == dag.HandlerWait || n.Handler == dag.HandlerApproval, now.UnixMilli())
	return apiwire.NodeFields{
		Handler: n.Handler, State: string(rec.State), Attempt: rec.Attempt, MaxAttempts: rec.MaxAttempt(n.Retry.Attempts()),
		QueuedAt: apiwire.UnixMilli(rec.QueuedAt), StartedAt: apiwire.UnixMilli(rec.StartedAt), FinishedAt: apiwire.UnixMilli(finished),
		QueueWaitMs: wait, DurationMs: run, Worker: rec.Worker, Error: rec.Error, Reason: rec.Reason,
		RetryAt: apiwire.UnixMilli(rec.RetryAt), Lost: rec.Lost, PastAttempts: viewPast(rec.Past),
		ApprovalMessage: n.ApprovalMessage(),
	}
}

// viewPast renders a node record's past attempts.
func viewPast(past []records.PastAttempt) []apiwire.PastAttempt {
	if len(past) == 0 {
		return nil
	}
	out := make([]apiwire.PastAttempt, len(past))
	for i, p := range past {
		wait, run := pastTiming(p)
		out[i] = apiwire.PastAttempt{Attempt: p.Attempt, Outcome: string(p.Outcome), Worker: p.Worker,
			QueuedAt: apiwire.UnixMilli(p.QueuedAt), StartedAt: apiwire.UnixMilli(p.StartedAt), EndedAt: apiwire.UnixMilli(p.EndedAt),
			QueueWaitMs: wait, DurationMs: run, Error: p.Error, State: string(p.State)}
	}
	return out
}
