package apisvc

import (
	"cmp"
	"net/http"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/schedule"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
)

// createSchedule stores a new schedule: 201 with the schedule. Body
// {workflow, cron, timezone, input, enabled, overlap}; workflow and cron
// are required, timezone defaults to UTC, enabled to true, overlap to skip.
func (s *Server) createSchedule(c *gin.Context) {
	body, problems, err := scheduleBodyOf(c, "workflow", "cron")
	if err != nil {
		abort(c, err)
		return
	}
	now := time.Now()
	def := statestore.ScheduleDef{ID: uuid.Must(uuid.NewV7()).String(), Enabled: true, Overlap: schedule.OverlapSkip,
		AnchorMs: now.UnixMilli(), CreatedMs: now.UnixMilli(), UpdatedMs: now.UnixMilli(), CreatedBy: requester(c)}
	applyBody(&def, body)
	def.Timezone = cmp.Or(def.Timezone, "UTC")
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	tt, err := s.checkSchedule(ctx, &def, true, problems)
	if err != nil {
		abort(c, err)
		return
	}
	next := nextFire(def, tt, now)
	if err := s.keys.CreateSchedule(ctx, s.rdb, def, next); err != nil {
		abort(c, err)
		return
	}
	s.log.Info("schedule created", logkey.ScheduleID, def.ID, logkey.Workflow, def.Workflow, logkey.Cron, def.Cron, logkey.KeyName, requester(c))
	c.Header("Location", "/schedules/"+def.ID)
	respond(c, http.StatusCreated, newScheduleDoc(statestore.StoredSchedule{Def: def, Next: next}))
}
