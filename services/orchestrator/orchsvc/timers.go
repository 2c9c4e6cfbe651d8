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

// timerBatch bounds the timers fired per round of a poll.
const timerBatch = 500

// timerRounds bounds the rounds of one poll: a poll reads again at once
// while a shard answered a full page, up to timerRounds × timerBatch
// timers per TimerPoll (100,000 a second at the defaults) instead of one
// page (5,000 a second), so a burst of due timers (a retry storm, a
// deadline shared by many tasks) does not queue up behind the poll's pace.
const timerRounds = 20

// fireAllDue fires due timers in rounds of fireDue until no shard answers
// a full page, for at most timerRounds rounds or one TimerPoll (the
// maintenance loop's other duties wait meanwhile).
func (s *Service) fireAllDue(ctx context.Context) error {
	start := time.Now()
	for range timerRounds {
		full, err := s.fireDue(ctx)
		if err != nil || !full || time.Since(start) >= s.cfg.TimerPoll {
			return err
		}
	}
	return nil
}

// fireDue turns due durable timers into TIMER controls on the run's
// partition, so the run's owner handles them in order with its other events.
// It reads every timer shard in one pipeline (at most timerBatch timers in
// all, split over the shards) and reports whether a shard had as many due
// as were read from it (more may be due). A timer is removed only after its control
// was acknowledged; a duplicate (a leader change mid-poll) is harmless
// because the core ignores timers that no longer match the node's attempt
// and state.
func (s *Service) fireDue(ctx context.Context) (full bool, err error) {
	shards := s.keys.TimerShards()
	per := int64(max((timerBatch+len(shards)-1)/len(shards), minTimerShardBatch))
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	pipe := s.rdb.Pipeline()
	reads := make([]*redis.StringSliceCmd, len(shards))
	for i, key := range shards {
		reads[i] = pipe.ZRangeArgs(ctx, redis.ZRangeArgs{Key: key, Start: "-inf", Stop: now, ByScore: true, Count: per})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return false, err
	}
	var msgs []eventbus.Message
	done := make([][]any, len(shards))
	for i, r := range reads {
		full = full || int64(len(r.Val())) >= per
		for _, member := range r.Val() {
			done[i] = append(done[i], member)
			m, ok, err := s.timerControl(member)
			if err != nil {
				return false, err
			}
			if ok {
				msgs = append(msgs, m)
			}
		}
	}
	if len(msgs) > 0 {
		if err := s.prod.Publish(ctx, msgs...); err != nil {
			return false, err
		}
	}
	return full, s.dropFired(ctx, shards, done)
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
