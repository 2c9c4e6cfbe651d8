package orchsvc

import (
	"context"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
)

// timerBatch bounds the timers fired per poll.
const timerBatch = 500

// fireDue turns due durable timers into TIMER controls on the run's
// partition, so the run's owner handles them in order with its other events.
// A timer is removed only after its control was acknowledged; a duplicate
// (a leader change mid-poll) is harmless because the core ignores timers
// that no longer match the node's attempt and state.
func (s *Service) fireDue(ctx context.Context) error {
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	due, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.keys.Timers(), Start: "-inf", Stop: now, ByScore: true, Count: timerBatch}).Result()
	if err != nil || len(due) == 0 {
		return err
	}
	msgs := make([]eventbus.Message, 0, len(due))
	done := make([]any, 0, len(due))
	for _, member := range due {
		done = append(done, member)
		t, err := statestore.ParseTimer(member)
		if err != nil {
			s.log.Warn("dropping malformed timer", logkey.Member, member, logkey.Err, err)
			continue
		}
		m, err := eventbus.NewMessage(eventsv1.TopicWorkflowControl, t.Run, &eventsv1.RunControl{
			RunId: t.Run, Action: eventsv1.ControlAction_CONTROL_ACTION_TIMER, Timer: eventsv1.TimerKind(t.Kind),
			NodeId: t.Node, Instance: int32(t.Instance), Attempt: int32(t.Attempt), RequestedAtMs: time.Now().UnixMilli(),
		})
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	if err := s.prod.Publish(ctx, msgs...); err != nil {
		return err
	}
	return s.rdb.ZRem(ctx, s.keys.Timers(), done...).Err()
}
