package apisvc

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/gin-gonic/gin"
)

// workerView is one item of GET /workers.
type workerView = apiwire.Worker

// workerList is the body of GET /workers.
type workerList = apiwire.WorkerList

// listWorkers lists live workers with their handlers and in-flight
// counts; ?all=true also lists workers whose heartbeats stopped.
func (s *Server) listWorkers(c *gin.Context) {
	all, err := boolQuery(c, "all")
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	ws, err := s.workers(ctx, time.Now())
	if err != nil {
		abort(c, err)
		return
	}
	out := workerList{Items: []workerView{}}
	for _, w := range ws {
		if all || w.Live {
			out.Items = append(out.Items, w)
		}
	}
	respond(c, http.StatusOK, out)
}

// workers reads the worker registry, sorted by id.
func (s *Server) workers(ctx context.Context, now time.Time) ([]workerView, error) {
	reg, err := s.keys.RegisteredWorkers(ctx, s.rdb)
	if err != nil {
		return nil, err
	}
	out := make([]workerView, 0, len(reg))
	for id, st := range reg {
		out = append(out, workerView{
			ID: id, Handlers: append([]string{}, st.Handlers...), Group: st.Group, Concurrency: st.Concurrency, InFlight: st.InFlight,
			StartedAt: apiwire.At(st.StartedAt), SeenAt: apiwire.At(st.SeenAt), Live: st.Live(now),
		})
	}
	slices.SortFunc(out, func(a, b workerView) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// handlerOffers returns a func telling whether a live worker offers a
// handler, reading the registry at most once; nil when it cannot be read.
func (s *Server) handlerOffers(ctx context.Context, now time.Time) func(string) bool {
	ws, err := s.workers(ctx, now)
	if err != nil {
		return nil
	}
	return func(h string) bool {
		for _, w := range ws {
			if w.Live && slices.Contains(w.Handlers, h) {
				return true
			}
		}
		return false
	}
}
