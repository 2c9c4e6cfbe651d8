package apisvc

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/gin-gonic/gin"
)

// runView is the body of GET /runs/{id} and of the SSE snapshot event.
type runView struct {
	runSummary
	Seq        uint64          `json:"seq"`
	Input      json.RawMessage `json:"input"`
	DurationMs *int64          `json:"duration_ms,omitempty"`
	Nodes      []nodeView      `json:"nodes"`
}

// nodeView is one node of a run: state, attempt, timings, worker, error,
// and why it waits.
type nodeView struct {
	ID        string   `json:"id"`
	DependsOn []string `json:"depends_on"`
	nodeFields
}

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
	respond(c, http.StatusOK, s.viewRun(ctx, r, time.Now()))
}

// viewRun builds the view of a loaded run.
func (s *Server) viewRun(ctx context.Context, r *loadedRun, now time.Time) runView {
	sum := summarize(r.id, r.stored.Fields)
	v := runView{runSummary: sum, Seq: r.seq(), Input: r.input(), Nodes: make([]nodeView, len(r.nodes)),
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
		v.Nodes[i] = nodeView{ID: n.ID, DependsOn: append([]string{}, n.DependsOn...), nodeFields: viewNode(n, r.nodes[i], now)}
		v.Nodes[i].WaitingReason = waitingReason(r.graph, i, r.nodes, w)
		v.Nodes[i].Instances = countsOf(r.nodes[i])
	}
	return v
}

// viewNode renders one record (a node's, or one of its instances') of node n.
func viewNode(n dag.Node, rec records.NodeRecord, now time.Time) nodeFields {
	finished := rec.FinishedAt
	if !rec.State.Terminal() {
		finished = 0
	}
	return nodeFields{
		Handler: n.Handler, State: string(rec.State), Attempt: rec.Attempt, MaxAttempts: n.Retry.Attempts(),
		QueuedAt: formatMs(rec.QueuedAt), StartedAt: formatMs(rec.StartedAt), FinishedAt: formatMs(finished),
		DurationMs: durationMs(rec.StartedAt, finished, now), Worker: rec.Worker, Error: rec.Error, Reason: rec.Reason,
		RetryAt: formatMs(rec.RetryAt), Lost: rec.Lost, PastAttempts: viewPast(rec.Past),
	}
}

// pastAttemptView is one earlier run of an attempt (records.PastAttempt).
type pastAttemptView struct {
	Attempt   int    `json:"attempt"`
	Outcome   string `json:"outcome"`
	Worker    string `json:"worker,omitempty"`
	QueuedAt  string `json:"queued_at,omitempty"`
	StartedAt string `json:"started_at,omitempty"`
	EndedAt   string `json:"ended_at,omitempty"`
	Error     string `json:"error,omitempty"`
	State     string `json:"state,omitempty"`
}

// viewPast renders a node record's past attempts.
func viewPast(past []records.PastAttempt) []pastAttemptView {
	if len(past) == 0 {
		return nil
	}
	out := make([]pastAttemptView, len(past))
	for i, p := range past {
		out[i] = pastAttemptView{Attempt: p.Attempt, Outcome: string(p.Outcome), Worker: p.Worker,
			QueuedAt: formatMs(p.QueuedAt), StartedAt: formatMs(p.StartedAt), EndedAt: formatMs(p.EndedAt),
			Error: p.Error, State: string(p.State)}
	}
	return out
}
