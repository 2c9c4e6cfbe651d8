package orchsvc

import "github.com/braidhq/braid/services/orchestrator/internal/failpoint"

// holdWrite offers the failpoint build (failpoint.HoldWrite) the batch's
// queued writes of existing runs that dispatch tasks, right before the
// pipeline that persists them runs, so that a test can stop the process
// with a write in hand whose follow-up messages matter. A build without the
// failpoints tag never calls it.
func (s *Service) holdWrite(groups []*runBatch) {
	for _, g := range groups {
		if g.cmd != nil && !g.eff.Created && len(g.eff.Dispatches) > 0 && failpoint.HoldWrite(s.log, g.run) {
			return
		}
	}
}
