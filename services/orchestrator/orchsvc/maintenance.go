package orchsvc

import (
	"context"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// reconcileBatch bounds the RECONCILE controls published per produce call.
const reconcileBatch = 500

// maintain runs the duties one orchestrator performs for all: firing due
// timers and asking the owners of active runs to reconcile them (at
// start-up, then every ReconcileEvery, and at once when a worker starts or
// is found dead, so that attempts lost with a worker run again within a
// poll instead of a heartbeat timeout). The holder of the maintenance
// lease (dutylease.go) does them; the others stand by.
func (s *Service) maintain(ctx context.Context) {
	timers := time.NewTicker(s.cfg.TimerPoll)
	defer timers.Stop()
	started := s.rdb.Subscribe(ctx, s.keys.WorkerChannel())
	defer started.Close()
	var lastScan, lastLiveness time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-started.Channel():
			s.log.Info("worker started: reconciling what a predecessor may have left", logkey.WorkerID, m.Payload)
			lastScan = time.Time{}
			continue
		case <-timers.C:
		}
		if !s.metrics.leading(dutyMaintenance, s.maintLease.hold(ctx)) {
			lastScan = time.Time{} // a new leader scans at once
			continue
		}
		if err := s.fireAllDue(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("fire due timers", logkey.Err, err)
		}
		if time.Since(lastLiveness) >= s.cfg.LivenessCheck {
			lastLiveness = time.Now()
			if s.workersDied(ctx) {
				lastScan = time.Time{}
			}
		}
		if time.Since(lastScan) >= s.cfg.ReconcileEvery {
			lastScan = time.Now()
			if err := s.requestReconcile(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("reconcile active runs", logkey.Err, err)
			}
		}
	}
}

// requestReconcile publishes a RECONCILE control for every active run, one
// index shard after the other.
func (s *Service) requestReconcile(ctx context.Context) error {
	for _, key := range s.keys.ActiveRunShards() {
		if err := s.reconcileShard(ctx, key); err != nil {
			return err
		}
	}
	return nil
}

// reconcileShard publishes a RECONCILE control for every run of one
// active-runs index shard, reconcileBatch at a time.
func (s *Service) reconcileShard(ctx context.Context, key string) error {
	for start := int64(0); ; start += reconcileBatch {
		runs, err := s.rdb.ZRange(ctx, key, start, start+reconcileBatch-1).Result()
		if err != nil || len(runs) == 0 {
			return err
		}
		msgs := make([]eventbus.Message, 0, len(runs))
		for _, run := range runs {
			m, err := eventbus.NewMessage(eventsv1.TopicWorkflowControl, run, &eventsv1.RunControl{
				RunId: run, Action: eventsv1.ControlAction_CONTROL_ACTION_RECONCILE, RequestedAtMs: time.Now().UnixMilli(),
			})
			if err != nil {
				return err
			}
			msgs = append(msgs, m)
		}
		if err := s.prod.Publish(ctx, msgs...); err != nil {
			return err
		}
		if len(runs) < reconcileBatch {
			return nil
		}
	}
}
