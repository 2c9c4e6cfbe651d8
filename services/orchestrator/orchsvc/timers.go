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
// It reads every timer shard in one pipeline (at most timerBatch timers in
// all, split over the shards). A timer is removed only after its control
// was acknowledged; a duplicate (a leader change mid-poll) is harmless
// because the core ignores timers that no longer match the node's attempt
// and state.
func (s *Service) fireDue(ctx context.Context) error {
	shards := s.keys.TimerShards()
	per := int64(max((timerBatch+len(shards)-1)/len(shards), minTimerShardBatch))
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	pipe := s.rdb.Pipeline()
	reads := make([]*redis.StringSliceCmd, len(shards))
	for i, key := range shards {
		reads[i] = pipe.ZRangeArgs(ctx, redis.ZRangeArgs{Key: key, Start: "-inf", Stop: now, ByScore: true, Count: per})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	var msgs []eventbus.Message
	done := make([][]any, len(shards))
	for i, r := range reads {
		for _, member := range r.Val() {
			done[i] = append(done[i], member)
			m, ok, err := s.timerControl(member)
			if err != nil {
				return err
			}
			if ok {
				msgs = append(msgs, m)
			}
		}
	}
	if len(msgs) > 0 {
		if err := s.prod.Publish(ctx, msgs...); err != nil {
			return err
		}
	}
	return s.dropFired(ctx, shards, done)
}

// minTimerShardBatch is the fewest timers fireDue reads from one shard.
const minTimerShardBatch = 32

// timerControl is the TIMER control of a fired timer member; false for a
// malformed member, which is logged and dropped.
func (s *Service) timerControl(member string) (eventbus.Message, bool, error) {
	t, err := statestore.ParseTimer(member)
	if err != nil {
		s.log.Warn("dropping malformed timer", logkey.Member, member, logkey.Err, err)
		return eventbus.Message{}, false, nil
	}
	m, err := eventbus.NewMessage(eventsv1.TopicWorkflowControl, t.Run, &eventsv1.RunControl{
		RunId: t.Run, Action: eventsv1.ControlAction_CONTROL_ACTION_TIMER, Timer: eventsv1.TimerKind(t.Kind),
		NodeId: t.Node, Instance: int32(t.Instance), Attempt: int32(t.Attempt), RequestedAtMs: time.Now().UnixMilli(),
	})
	return m, err == nil, err
}

// dropFired removes the fired timers, done[i] from shards[i], in one pipeline.
func (s *Service) dropFired(ctx context.Context, shards []string, done [][]any) error {
	pipe := s.rdb.Pipeline()
	for i, members := range done {
		if len(members) > 0 {
			pipe.ZRem(ctx, shards[i], members...)
		}
	}
	if pipe.Len() == 0 {
		return nil
	}
	_, err := pipe.Exec(ctx)
	return err
}
