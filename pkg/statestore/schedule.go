package statestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// ScheduleDef is a schedule as its user defined it, stored as JSON in the
// schedule's hash. The api validates it; the scheduler only reads it.
type ScheduleDef struct {
	ID       string          `json:"id"`
	Workflow string          `json:"workflow"`
	Cron     string          `json:"cron"`
	Timezone string          `json:"timezone"` // IANA name; empty means UTC
	Input    json.RawMessage `json:"input"`    // JSON object
	Enabled  bool            `json:"enabled"`
	Overlap  string          `json:"overlap"` // "skip" or "allow"
	// AnchorMs is the phase of an "@every" period (ms): fires fall on
	// AnchorMs + k·period. It is reset whenever the timing changes.
	AnchorMs  int64  `json:"anchor_ms"`
	CreatedMs int64  `json:"created_ms"`
	UpdatedMs int64  `json:"updated_ms"`
	CreatedBy string `json:"created_by,omitempty"` // the api key's name, never the key
}

// StoredSchedule is a schedule with its firing state.
type StoredSchedule struct {
	Def ScheduleDef
	// Next is the next fire time; zero when the schedule is disabled or
	// its expression never fires again.
	Next time.Time
	// LastFire and LastRun are the latest fire that started a run.
	LastFire time.Time
	LastRun  string
	// LastSkip is the latest fire skipped because the previous run was active.
	LastSkip time.Time
	// LastError says why the latest fire could not start a run ("" if it could).
	LastError string
}

// Schedule hash fields.
const (
	schedDef       = "def"
	schedNext      = "next"
	schedLastFire  = "last_fire"
	schedLastRun   = "last_run"
	schedLastSkip  = "last_skip"
	schedLastError = "last_error"
)

// ErrScheduleExists is returned by CreateSchedule for an id that is taken.
var ErrScheduleExists = errors.New("schedule id already exists")

// putScheduleScript creates or replaces a schedule's definition and timing.
//
//	KEYS[1] schedule hash  KEYS[2] Schedules index  KEYS[3] ScheduleDue
//	ARGV[1] id  ARGV[2] definition JSON  ARGV[3] created ms
//	ARGV[4] next fire ms, "" for none (disabled), "keep" to leave the timing alone
//	ARGV[5] "1" create, "0" update
//	returns 1 written, 0 refused (create: the id exists with another
//	definition; update: the schedule does not exist)
//
// Idempotent: a replayed create finds its own definition and succeeds.
var putScheduleScript = redis.NewScript(`
local exists = redis.call('EXISTS', KEYS[1]) == 1
if ARGV[5] == '1' then
  if exists and redis.call('HGET', KEYS[1], 'def') ~= ARGV[2] then return 0 end
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
elseif not exists then
  return 0
end
redis.call('HSET', KEYS[1], 'def', ARGV[2])
if ARGV[4] == '' then
  redis.call('HDEL', KEYS[1], 'next')
  redis.call('ZREM', KEYS[3], ARGV[1])
elseif ARGV[4] ~= 'keep' then
  redis.call('HSET', KEYS[1], 'next', ARGV[4])
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
end
return 1
`)

// KeepNext tells UpdateSchedule to leave the schedule's next fire time as it is.
var KeepNext = time.Unix(0, -1)

// CreateSchedule stores a new schedule whose first fire is next (zero: none,
// e.g. created disabled). An id already in use gives ErrScheduleExists.
func (k Keys) CreateSchedule(ctx context.Context, rdb redis.Scripter, def ScheduleDef, next time.Time) error {
	ok, err := k.putSchedule(ctx, rdb, def, next, true)
	if err != nil {
		return fmt.Errorf("create schedule %s: %w", def.ID, err)
	}
	if !ok {
		return fmt.Errorf("create schedule %s: %w", def.ID, ErrScheduleExists)
	}
	return nil
}

// UpdateSchedule replaces a schedule's definition and next fire time (zero:
// none; KeepNext: unchanged). A missing schedule gives ErrNotFound. Its
// firing history (last fire, run, skip, error) is kept.
func (k Keys) UpdateSchedule(ctx context.Context, rdb redis.Scripter, def ScheduleDef, next time.Time) error {
	ok, err := k.putSchedule(ctx, rdb, def, next, false)
	if err != nil {
		return fmt.Errorf("update schedule %s: %w", def.ID, err)
	}
	if !ok {
		return fmt.Errorf("schedule %s: %w", def.ID, ErrNotFound)
	}
	return nil
}

func (k Keys) putSchedule(ctx context.Context, rdb redis.Scripter, def ScheduleDef, next time.Time, create bool) (bool, error) {
	b, err := json.Marshal(def)
	if err != nil {
		return false, err
	}
	nextArg := ""
	switch {
	case next.Equal(KeepNext):
		nextArg = "keep"
	case !next.IsZero():
		nextArg = strconv.FormatInt(next.UnixMilli(), 10)
	}
	n, err := putScheduleScript.Run(ctx, rdb, []string{k.Schedule(def.ID), k.Schedules(), k.ScheduleDue()},
		def.ID, b, def.CreatedMs, nextArg, boolArg(create)).Int()
	return n == 1, err
}

// deleteScheduleScript removes a schedule and its index entries.
//
//	KEYS[1] schedule hash  KEYS[2] Schedules index  KEYS[3] ScheduleDue  ARGV[1] id
//	returns 1 deleted, 0 not found
var deleteScheduleScript = redis.NewScript(`
local n = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return n
`)

// DeleteSchedule removes a schedule; it never fires again. A missing
// schedule gives ErrNotFound. Runs it started are kept.
func (k Keys) DeleteSchedule(ctx context.Context, rdb redis.Scripter, id string) error {
	n, err := deleteScheduleScript.Run(ctx, rdb, []string{k.Schedule(id), k.Schedules(), k.ScheduleDue()}, id).Int()
	if err != nil {
		return fmt.Errorf("delete schedule %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("schedule %s: %w", id, ErrNotFound)
	}
	return nil
}

// GetSchedule reads one schedule; a missing one gives ErrNotFound.
func (k Keys) GetSchedule(ctx context.Context, rdb redis.Cmdable, id string) (StoredSchedule, error) {
	s, err := k.GetSchedules(ctx, rdb, id)
	if err != nil {
		return StoredSchedule{}, err
	}
	if s[0] == nil {
		return StoredSchedule{}, fmt.Errorf("schedule %s: %w", id, ErrNotFound)
	}
	return *s[0], nil
}

// GetSchedules reads schedules in one round trip; a missing one is nil.
func (k Keys) GetSchedules(ctx context.Context, rdb redis.Cmdable, ids ...string) ([]*StoredSchedule, error) {
	pipe := rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, k.Schedule(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("read schedules %v: %w", ids, err)
	}
	out := make([]*StoredSchedule, len(ids))
	for i, c := range cmds {
		m := c.Val()
		if m[schedDef] == "" {
			continue
		}
		s := &StoredSchedule{Next: msTime(m[schedNext]), LastFire: msTime(m[schedLastFire]), LastRun: m[schedLastRun],
			LastSkip: msTime(m[schedLastSkip]), LastError: m[schedLastError]}
		if err := json.Unmarshal([]byte(m[schedDef]), &s.Def); err != nil {
			return nil, fmt.Errorf("schedule %s: stored definition is corrupt: %w", ids[i], err)
		}
		out[i] = s
	}
	return out, nil
}

// DueSchedules returns up to limit ids of schedules whose next fire time is ≤ now, earliest first.
func (k Keys) DueSchedules(ctx context.Context, rdb redis.Cmdable, now time.Time, limit int) ([]string, error) {
	ids, err := rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: k.ScheduleDue(), Start: "-inf",
		Stop: strconv.FormatInt(now.UnixMilli(), 10), ByScore: true, Count: int64(limit)}).Result()
	if err != nil {
		return nil, fmt.Errorf("due schedules: %w", err)
	}
	return ids, nil
}

// ScheduleAdvance records what the scheduler did with one due fire.
type ScheduleAdvance struct {
	ID string
	// Expected is the next fire time the scheduler read; the advance is
	// refused if the schedule's timing changed since (updated, disabled,
	// deleted, or advanced by another scheduler).
	Expected time.Time
	// Next is the new next fire time (zero: none).
	Next time.Time
	// Fired and Run record a fire that started a run; Skipped a fire
	// skipped by the overlap policy; Error a fire that could not start.
	Fired   time.Time
	Run     string
	Skipped time.Time
	Error   string
}

// advanceScheduleScript moves a schedule past a fire, if its timing is
// still what the scheduler read (compare-and-set on the due score).
//
//	KEYS[1] schedule hash  KEYS[2] ScheduleDue
//	ARGV[1] id  ARGV[2] expected next ms  ARGV[3] new next ms ("" = none)
//	ARGV[4] fired ms ("" = no run)  ARGV[5] run id  ARGV[6] skipped ms ("" = not skipped)  ARGV[7] error
//	returns 1 advanced, 0 refused (the timing changed meanwhile)
//
// Idempotent: once applied, a replay finds another due score and is refused.
var advanceScheduleScript = redis.NewScript(`
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('ZREM', KEYS[2], ARGV[1]) return 0 end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'last_fire', ARGV[4], 'last_run', ARGV[5]) end
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'last_skip', ARGV[6]) end
redis.call('HSET', KEYS[1], 'last_error', ARGV[7])
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], 'next')
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[1], 'next', ARGV[3])
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
end
return 1
`)

// AdvanceSchedule applies a; it reports false when the schedule's timing
// changed since the scheduler read it (nothing is written then).
func (k Keys) AdvanceSchedule(ctx context.Context, rdb redis.Scripter, a ScheduleAdvance) (bool, error) {
	n, err := advanceScheduleScript.Run(ctx, rdb, []string{k.Schedule(a.ID), k.ScheduleDue()},
		a.ID, a.Expected.UnixMilli(), msArg(a.Next), msArg(a.Fired), a.Run, msArg(a.Skipped), a.Error).Int()
	if err != nil {
		return false, fmt.Errorf("advance schedule %s: %w", a.ID, err)
	}
	return n == 1, nil
}

// msArg is t in Unix ms, or "" for the zero time.
func msArg(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}
