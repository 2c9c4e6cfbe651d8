package apisvc

import (
	"errors"
	"net/http"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
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
	err = s.keys.DeleteSchedule(ctx, s.rdb, id)
	if errors.Is(err, statestore.ErrNotFound) {
		abort(c, errNotFound("schedule %q not found", id))
		return
	}
	if err != nil {
		abort(c, err)
		return
	}
	s.log.Info("schedule deleted", logkey.ScheduleID, id, logkey.KeyName, requester(c))
	c.Status(http.StatusNoContent)
}
