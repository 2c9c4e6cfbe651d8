package apisvc

import (
	"net/http"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
)

// listSchedules pages through schedules, newest first.
func (s *Server) listSchedules(c *gin.Context) {
	limit, err := limitQuery(c)
	if err != nil {
		abort(c, err)
		return
	}
	cur, err := cursorQuery(c, "schedules")
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	page, err := statestore.PageSorted(ctx, s.rdb, s.keys.Schedules(), cur.after(), limit, true)
	if err != nil {
		abort(c, err)
		return
	}
	ids := make([]string, len(page))
	for i, z := range page {
		ids[i] = z.Member.(string)
	}
	stored, err := s.keys.GetSchedules(ctx, s.rdb, ids...)
	if err != nil {
		abort(c, err)
		return
	}
	out := apiwire.SchedulePage{Items: make([]apiwire.Schedule, 0, len(stored))}
	for _, st := range stored {
		if st != nil { // deleted since the page was read
			out.Items = append(out.Items, newScheduleDoc(*st))
		}
	}
	if len(page) == limit {
		last := page[len(page)-1]
		out.NextCursor = cursor{List: "schedules", Score: last.Score, Member: last.Member.(string)}.encode()
	}
	respond(c, http.StatusOK, out)
}

// getSchedule shows one schedule with its next and last fire.
func (s *Server) getSchedule(c *gin.Context) {
	id, err := scheduleParam(c)
	if err != nil {
		abort(c, err)
		return
	}
	st, err := s.loadSchedule(c, id)
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, newScheduleDoc(st))
}

// loadSchedule reads a schedule; 404 when it does not exist.
func (s *Server) loadSchedule(c *gin.Context, id string) (statestore.StoredSchedule, error) {
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	st, err := s.keys.GetSchedule(ctx, s.rdb, id)
	return st, scheduleErr(id, err)
}
