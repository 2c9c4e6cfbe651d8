package orchsvc

import (
	"context"

	"github.com/braidhq/braid/pkg/logkey"
)

// workersDied looks for registered workers whose liveness key lapsed: they
// died without stopping (a stopping worker removes its entry). Each is
// logged, counted and removed from the registry, and the caller reconciles
// every active run at once, which finds their attempts' claims orphaned or
// lapsed and dispatches them again. A worker that was only slow comes back
// by itself: it renews its liveness and registers again.
func (s *Service) workersDied(ctx context.Context) bool {
	ids, err := s.rdb.HKeys(ctx, s.keys.Workers()).Result()
	if err != nil || len(ids) == 0 {
		s.metrics.liveWorkersIf(err == nil, 0)
		return false
	}
	live, err := s.keys.LiveIncarnations(ctx, s.rdb, ids)
	if err != nil {
		return false
	}
	s.metrics.liveWorkers(len(live))
	died := false
	for _, id := range ids {
		if _, ok := live[id]; ok {
			continue
		}
		// HDEL only if the entry is still there: one leader notices once.
		if n, err := s.rdb.HDel(ctx, s.keys.Workers(), id).Result(); err == nil && n == 1 {
			s.log.Warn("worker stopped responding: its attempts are lost and will be dispatched again", logkey.WorkerID, id)
			s.WorkersLost.Add(1)
			died = true
		}
	}
	return died
}
