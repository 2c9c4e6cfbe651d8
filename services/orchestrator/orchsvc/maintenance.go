package orchsvc

import (
	"context"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
)

// leaderScript takes or keeps the maintenance lease.
//
//	KEYS[1] lease key  ARGV[1] orchestrator id  ARGV[2] ttl ms
//	returns 1 when ARGV[1] holds the lease (taken or extended), else 0
var leaderScript = redis.NewScript(`
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if not holder then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0
`)

// leaderTTL is the maintenance lease's time to live; the holder renews it
// every TimerPoll, so a dead leader is replaced within leaderTTL.
const leaderTTL = 3 * time.Second

// reconcileBatch bounds the RECONCILE controls published per produce call.
const reconcileBatch = 500

// maintain runs the duties one orchestrator performs for all: firing due
// timers and asking the owners of active runs to reconcile them (at
// start-up, then every ReconcileEvery). The holder of a Redis lease does
// them; the others stand by.
func (s *Service) maintain(ctx context.Context) {
	timers := time.NewTicker(s.cfg.TimerPoll)
	defer timers.Stop()
	var lastScan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-timers.C:
		}
		if !s.lead(ctx) {
			lastScan = time.Time{} // a new leader scans at once
			continue
		}
		if err := s.fireDue(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("fire due timers", "err", err)
		}
		if time.Since(lastScan) >= s.cfg.ReconcileEvery {
			lastScan = time.Now()
			if err := s.requestReconcile(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("reconcile active runs", "err", err)
			}
		}
	}
}

// lead reports whether this orchestrator holds the maintenance lease.
func (s *Service) lead(ctx context.Context) bool {
	ok, err := leaderScript.Run(ctx, s.rdb, []string{s.keys.Leader("maintenance")}, s.cfg.ID, leaderTTL.Milliseconds()).Int()
	return err == nil && ok == 1
}

// requestReconcile publishes a RECONCILE control for every active run.
func (s *Service) requestReconcile(ctx context.Context) error {
	for start := int64(0); ; start += reconcileBatch {
		runs, err := s.rdb.ZRange(ctx, s.keys.ActiveRuns(), start, start+reconcileBatch-1).Result()
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
