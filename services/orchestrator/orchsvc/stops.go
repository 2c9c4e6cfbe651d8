package orchsvc

import (
	"context"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/runstate"
)

// announceStops publishes on the stop channel the runs of applied whose
// batch cancelled nodes, so that workers holding their attempts check the
// claims at once (and kill a running shell) instead of at their next
// heartbeat. Best effort: the heartbeat is the guarantee, this the speed.
func (s *Service) announceStops(ctx context.Context, applied []*runBatch) {
	pipe := s.rdb.Pipeline()
	n := 0
	for _, g := range applied {
		for _, c := range g.eff.Changes {
			if c.State == runstate.NodeCancelled {
				pipe.Publish(ctx, s.keys.StopChannel(), g.run)
				n++
				break
			}
		}
	}
	if n == 0 {
		return
	}
	if _, err := pipe.Exec(ctx); err != nil {
		s.log.Warn("announce stopped attempts; workers will see them at their next heartbeat", logkey.Runs, n, logkey.Err, err)
	}
}
