package orchsvc

import (
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/records"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// PendingRestartAfter is how old a run's pending record must be, with the
// run still not started, before the reconciler requests its start again.
// The api (or the scheduler) writes the record and then publishes the
// start; if it died in between, nobody else would ever start the run.
const PendingRestartAfter = 30 * time.Second

// recoverPending is the reconciler's repair of a run that was recorded
// pending but never started, decided from the record gather read: once it
// is PendingRestartAfter old, RunStartRequested is published again from it
// (a duplicate start is ignored by the core); an active-index entry with
// no record is dropped.
func (s *Service) recoverPending(g *runBatch, now int64) {
	f := g.facts.pending.Val()
	switch {
	case len(f) == 0:
		g.dropActive = true
		return
	case f[records.FieldStatus] != "pending" || now-atoi64(f[records.FieldCreated]) < PendingRestartAfter.Milliseconds():
		return
	}
	version, _ := strconv.Atoi(f[records.FieldVersion])
	m, err := eventbus.NewMessage(eventsv1.TopicWorkflowStart, g.run, &eventsv1.RunStartRequested{
		RunId: g.run, Workflow: f[records.FieldWorkflow], Version: int32(version), Input: []byte(f[records.FieldInput]),
		RequestedAtMs: atoi64(f[records.FieldCreated]), RequestedBy: f[records.FieldRequestedBy],
	})
	if err != nil {
		s.log.WarnContext(g.logCtx(), "re-request the start of a pending run", logkey.RunID, g.run, logkey.Err, err)
		return
	}
	s.log.InfoContext(g.logCtx(), "re-requesting the start of a run recorded but never started", logkey.RunID, g.run, logkey.Workflow, f[records.FieldWorkflow])
	traceInject(g, []eventbus.Message{m})
	g.out = append(g.out, m)
}
