package apisvc

import (
	"cmp"
	"errors"
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
	if err != nil {
		abort(c, err)
		return
	}
	raw, err := readJSONBody(c)
	if err != nil {
		abort(c, err)
		return
	}
	body, errs, err := decodeScheduleBody(raw)
	if err != nil {
		abort(c, err)
		return
	}
	if len(errs) > 0 {
		abort(c, errInvalid(scheduleDetail(errs), errs))
		return
	}
	st, err := s.loadSchedule(c, id)
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
	tt, err := s.checkSchedule(ctx, &def, def.Enabled || body.Workflow != nil || body.Input != nil)
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
	err = s.keys.UpdateSchedule(ctx, s.rdb, def, next)
	if errors.Is(err, statestore.ErrNotFound) {
		abort(c, errNotFound("schedule %q not found", id))
		return
	}
	if err != nil {
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
