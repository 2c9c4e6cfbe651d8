package orchsvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/schedule"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
)

// scheduleBatch bounds the due schedules handled per poll.
const scheduleBatch = 100

// scheduler fires due schedules while its orchestrator holds the scheduler
// lease. Every poll it reads the schedules whose next fire time has come
// (one sorted set), and for each decides with the pure schedule.Decide
// what to do: start a run for the latest fire time, skip it (overlap
// policy), or nothing. A fire requests its run exactly the way the api
// does — a pending run record, then RunStartRequested on workflow.start —
// under a run id derived from the schedule id and the fire time, and only
// then moves the schedule past that fire (compare-and-set). A crash or a
// leader change in between repeats the request under the same run id,
// which the pending record (written only if absent) and the
// orchestrator's idempotent start turn into nothing.
type scheduler struct {
	rdb   redis.UniversalClient
	keys  statestore.Keys
	pub   publisher
	lease *leaderLease
	clock func() time.Time
	poll  time.Duration
	log   *slog.Logger
	// metrics counts fires and misses (set by New).
	metrics *orchMetrics
}

func newScheduler(cfg Config, pub publisher, locker *redislock.Client) *scheduler {
	log := cfg.Logger.With(logkey.Component, "scheduler", logkey.OrchestratorID, cfg.ID)
	return &scheduler{
		rdb: cfg.Redis, keys: cfg.Keys, pub: pub, clock: cfg.Clock, poll: cfg.SchedulePoll, log: log,
		lease: newLeaderLease(locker, cfg.Keys.Leader("scheduler"), cfg, log),
	}
}

// run polls until ctx ends. It does not give up the lease: the owner calls
// lease.release after run returns (a process that dies just stops
// refreshing it, and another takes over within the lease's TTL).
func (sc *scheduler) run(ctx context.Context) {
	t := time.NewTicker(sc.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !sc.metrics.leading(dutyScheduler, sc.lease.hold(ctx)) {
			continue
		}
		if err := sc.tick(ctx); err != nil && ctx.Err() == nil {
			sc.log.Warn("fire due schedules", logkey.Err, err)
		}
	}
}

// tick handles every schedule that is due now.
func (sc *scheduler) tick(ctx context.Context) error {
	now := sc.clock()
	ids, err := sc.keys.DueSchedules(ctx, sc.rdb, now, scheduleBatch)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := sc.handle(ctx, id, now); err != nil && ctx.Err() == nil {
			sc.log.Warn("schedule fire failed; retrying at the next poll", logkey.ScheduleID, id, logkey.Err, err)
		}
	}
	return nil
}

// handle decides and carries out what one due schedule does at now.
func (sc *scheduler) handle(ctx context.Context, id string, now time.Time) error {
	st, err := sc.keys.GetSchedule(ctx, sc.rdb, id)
	if err != nil {
		return err // deleted meanwhile (its due entry went with it), or Redis trouble
	}
	adv := statestore.ScheduleAdvance{ID: id, Expected: st.Next}
	tt, err := timetable(st.Def)
	if err != nil || !st.Def.Enabled {
		// Not reachable through the api (it validates and unschedules), but
		// a schedule that cannot fire must not be polled forever.
		adv.Error = fmt.Sprintf("schedule cannot fire: enabled=%t, %v", st.Def.Enabled, err)
		return sc.advance(ctx, adv)
	}
	active, err := sc.previousActive(ctx, st)
	if err != nil {
		return err
	}
	d := schedule.Decide(tt, schedule.State{Next: st.Next, Overlap: st.Def.Overlap, PreviousActive: active}, now)
	sc.metrics.decided(st.Next, d.FireAt, d.Due, d.Fire)
	if !d.Due {
		return nil
	}
	adv.Next = d.Next
	if !d.Fire {
		adv.Skipped = d.FireAt
		sc.log.Info("schedule fire skipped: the previous run is still active", logkey.ScheduleID, id,
			logkey.FireAt, d.FireAt, logkey.RunID, st.LastRun)
		return sc.advance(ctx, adv)
	}
	run, err := sc.fire(ctx, st.Def, d.FireAt, now)
	switch {
	case errors.Is(err, statestore.ErrNotFound):
		adv.Error = err.Error()
		sc.metrics.droppedFire()
		sc.log.Warn("schedule fire dropped", logkey.ScheduleID, id, logkey.Workflow, st.Def.Workflow, logkey.Err, err)
	case err != nil:
		return err // not advanced: the next poll requests the same run id again
	default:
		adv.Fired, adv.Run = d.FireAt, run
		sc.metrics.fired()
	}
	return sc.advance(ctx, adv)
}

// advance moves a schedule past a fire; a refusal means it was updated,
// disabled or deleted meanwhile, which is fine.
func (sc *scheduler) advance(ctx context.Context, a statestore.ScheduleAdvance) error {
	ok, err := sc.keys.AdvanceSchedule(ctx, sc.rdb, a)
	if err == nil && !ok {
		sc.log.Debug("schedule changed while firing; not advanced", logkey.ScheduleID, a.ID)
	}
	return err
}

// timetable parses a stored schedule's expression in its time zone.
func timetable(d statestore.ScheduleDef) (schedule.Timetable, error) {
	loc, err := schedule.Zone(d.Timezone)
	if err != nil {
		return nil, err
	}
	return schedule.Parse(d.Cron, loc, time.UnixMilli(d.AnchorMs))
}

// previousActive reports whether the overlap policy holds a fire back: the
// policy is skip and the run of the previous fire has not ended.
func (sc *scheduler) previousActive(ctx context.Context, st statestore.StoredSchedule) (bool, error) {
	if st.Def.Overlap != schedule.OverlapSkip || st.LastRun == "" {
		return false, nil
	}
	sums, err := sc.keys.RunSummaries(ctx, sc.rdb, st.LastRun)
	if err != nil {
		return false, err
	}
	status, ok := sums[0][records.FieldStatus]
	return ok && !records.RunStatus(status).Terminal(), nil
}
