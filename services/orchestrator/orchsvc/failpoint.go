package orchsvc

import (
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/braidhq/braid/services/orchestrator/internal/failpoint"
)

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

// exitAfterWrite offers the failpoint build (failpoint.ExitAfterWrite) each
// finished result that g's stored write applied, right after the write and
// before anything follows from it. A build without the failpoints tag never
// calls it.
func (s *Service) exitAfterWrite(g *runBatch) {
	for _, in := range g.events {
		if r, ok := in.ev.(core.Result); ok && r.Status != core.ResultRunning {
			failpoint.ExitAfterWrite(s.log, g.run, r.Node)
		}
	}
}
