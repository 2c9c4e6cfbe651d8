package statestore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/stretchr/testify/require"
)

func TestScheduleLifecycle(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	t0 := time.UnixMilli(1_000_000).UTC()
	def := statestore.ScheduleDef{ID: "s1", Workflow: "wf", Cron: "@every 2s", Input: []byte(`{"a":1}`),
		Enabled: true, Overlap: "skip", CreatedMs: t0.UnixMilli(), UpdatedMs: t0.UnixMilli()}
	require.NoError(t, e.keys.CreateSchedule(e.ctx, e.rdb, def, t0.Add(2*time.Second)))
	require.NoError(t, e.keys.CreateSchedule(e.ctx, e.rdb, def, t0.Add(2*time.Second)), "a replayed create succeeds")
	other := def
	other.Workflow = "other"
	require.ErrorIs(t, e.keys.CreateSchedule(e.ctx, e.rdb, other, t0), statestore.ErrScheduleExists)

	got, err := e.keys.GetSchedule(e.ctx, e.rdb, "s1")
	require.NoError(t, err)
	require.Equal(t, def.Workflow, got.Def.Workflow)
	require.JSONEq(t, `{"a":1}`, string(got.Def.Input))
	require.Equal(t, t0.Add(2*time.Second), got.Next)

	due, err := e.keys.DueSchedules(e.ctx, e.rdb, t0.Add(time.Second), 10)
	require.NoError(t, err)
	require.Empty(t, due)
	due, err = e.keys.DueSchedules(e.ctx, e.rdb, t0.Add(2*time.Second), 10)
	require.NoError(t, err)
	require.Equal(t, []string{"s1"}, due)

	// The scheduler advances past a fire; a stale advance (replay, or a
	// second scheduler) is refused.
	adv := statestore.ScheduleAdvance{ID: "s1", Expected: t0.Add(2 * time.Second), Next: t0.Add(4 * time.Second),
		Fired: t0.Add(2 * time.Second), Run: "s1.x"}
	ok, err := e.keys.AdvanceSchedule(e.ctx, e.rdb, adv)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = e.keys.AdvanceSchedule(e.ctx, e.rdb, adv)
	require.NoError(t, err)
	require.False(t, ok)
	got, err = e.keys.GetSchedule(e.ctx, e.rdb, "s1")
	require.NoError(t, err)
	require.Equal(t, "s1.x", got.LastRun)
	require.Equal(t, t0.Add(2*time.Second), got.LastFire)
	require.Equal(t, t0.Add(4*time.Second), got.Next)

	// An update that keeps the timing keeps next and the history; disabling
	// takes the schedule out of the due set.
	def.Input = []byte(`{"a":2}`)
	require.NoError(t, e.keys.UpdateSchedule(e.ctx, e.rdb, def, statestore.KeepNext))
	got, err = e.keys.GetSchedule(e.ctx, e.rdb, "s1")
	require.NoError(t, err)
	require.Equal(t, t0.Add(4*time.Second), got.Next)
	require.Equal(t, "s1.x", got.LastRun)
	def.Enabled = false
	require.NoError(t, e.keys.UpdateSchedule(e.ctx, e.rdb, def, time.Time{}))
	due, err = e.keys.DueSchedules(e.ctx, e.rdb, t0.Add(time.Hour), 10)
	require.NoError(t, err)
	require.Empty(t, due)
	ok, err = e.keys.AdvanceSchedule(e.ctx, e.rdb, statestore.ScheduleAdvance{ID: "s1", Expected: t0.Add(4 * time.Second), Next: t0.Add(6 * time.Second)})
	require.NoError(t, err)
	require.False(t, ok, "a disabled schedule is not advanced back into the due set")
	due, err = e.keys.DueSchedules(e.ctx, e.rdb, t0.Add(time.Hour), 10)
	require.NoError(t, err)
	require.Empty(t, due)

	all, err := e.keys.GetSchedules(e.ctx, e.rdb, "s1", "missing")
	require.NoError(t, err)
	require.NotNil(t, all[0])
	require.Nil(t, all[1])
	require.Equal(t, []string{"s1"}, e.rdb.ZRange(e.ctx, e.keys.Schedules(), 0, -1).Val())

	require.NoError(t, e.keys.DeleteSchedule(e.ctx, e.rdb, "s1"))
	require.True(t, errors.Is(e.keys.DeleteSchedule(e.ctx, e.rdb, "s1"), statestore.ErrNotFound))
	_, err = e.keys.GetSchedule(e.ctx, e.rdb, "s1")
	require.ErrorIs(t, err, statestore.ErrNotFound)
	require.ErrorIs(t, e.keys.UpdateSchedule(e.ctx, e.rdb, def, time.Time{}), statestore.ErrNotFound)
	require.Zero(t, e.rdb.ZCard(e.ctx, e.keys.Schedules()).Val())
	require.Zero(t, e.rdb.ZCard(e.ctx, e.keys.ScheduleDue()).Val())
}

// TestScheduleAdvanceAfterDelete checks a scheduler that read a schedule
// just before it was deleted cannot bring it back.
func TestScheduleAdvanceAfterDelete(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	t0 := time.UnixMilli(5_000).UTC()
	def := statestore.ScheduleDef{ID: "s2", Workflow: "wf", Cron: "@every 1s", Enabled: true, Overlap: "allow"}
	require.NoError(t, e.keys.CreateSchedule(e.ctx, e.rdb, def, t0))
	require.NoError(t, e.keys.DeleteSchedule(e.ctx, e.rdb, "s2"))
	ok, err := e.keys.AdvanceSchedule(e.ctx, e.rdb, statestore.ScheduleAdvance{ID: "s2", Expected: t0, Next: t0.Add(time.Second), Fired: t0, Run: "r"})
	require.NoError(t, err)
	require.False(t, ok)
	require.Zero(t, e.rdb.Exists(e.ctx, e.keys.Schedule("s2")).Val())
	require.Zero(t, e.rdb.ZCard(e.ctx, e.keys.ScheduleDue()).Val())
}
