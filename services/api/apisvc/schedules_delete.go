package apisvc

import (
	"net/http"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/gin-gonic/gin"
)

// deleteSchedule removes a schedule; it never fires again and the runs it
// started are kept: 204.
func (s *Server) deleteSchedule(c *gin.Context) {
	id, err := scheduleParam(c)
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	if err := scheduleErr(id, s.keys.DeleteSchedule(ctx, s.rdb, id)); err != nil {
		abort(c, err)
		return
	}
	s.log.Info("schedule deleted", logkey.ScheduleID, id, logkey.KeyName, requester(c))
	c.Status(http.StatusNoContent)
}
