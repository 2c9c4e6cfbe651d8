package apisvc

import (
	"cmp"
	"net/http"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
)

// updateSchedule changes the fields a PATCH body sends: 200 with the
// schedule. A change of cron or timezone, or enabling a disabled schedule,
// restarts its timing from now; other changes keep its next fire time.
func (s *Server) updateSchedule(c *gin.Context) {
	id, err := scheduleParam(c)
	var body scheduleBody
	var problems []FieldError
	if err == nil {
		body, problems, err = scheduleBodyOf(c)
	}
	var st statestore.StoredSchedule
	if err == nil {
		st, err = s.loadSchedule(c, id)
	}
	if err != nil {
		abort(c, err)
		return
	}
	now := time.Now()
	def := st.Def
	timing := applyBody(&def, body)
	def.Timezone = cmp.Or(def.Timezone, "UTC")
	def.UpdatedMs = now.UnixMilli()
	if timing {
		def.AnchorMs = now.UnixMilli()
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	tt, err := s.checkSchedule(ctx, &def, def.Enabled || body.Workflow != nil || body.Input != nil, problems)
	if err != nil {
		abort(c, err)
		return
	}
	next := statestore.KeepNext
	switch {
	case !def.Enabled:
		next = time.Time{}
	case timing:
		next = nextFire(def, tt, now)
	}
	if err := scheduleErr(id, s.keys.UpdateSchedule(ctx, s.rdb, def, next)); err != nil {
		abort(c, err)
		return
	}
	s.log.Info("schedule updated", logkey.ScheduleID, id, logkey.Workflow, def.Workflow, logkey.Enabled, def.Enabled, logkey.KeyName, requester(c))
	st, err = s.loadSchedule(c, id)
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, newScheduleDoc(st))
}
