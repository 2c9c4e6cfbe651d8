package apisvc

import (
	"context"
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
)

// deleteBusyWait bounds how long DELETE /runs/{id} waits for the run's
// lock: the orchestrator lets an ended run's lock go at its next lease tick
// (a third of the lock's TTL), so a run deleted right after it ended is
// deleted, not refused.
const deleteBusyWait = 3 * time.Second

// errRunBusy: the run's lock stayed held for all of deleteBusyWait.
var errRunBusy = errors.New("run busy")

// deleteRun deletes an ended run whole, as the retention does
// (statestore.PruneRun): 204. Unknown run 404; a run that has not ended
// 409 (cancel it first); a run whose lock stays held (an orchestrator is
// handling an event of it) 409 with Retry-After.
func (s *Server) deleteRun(c *gin.Context) {
	id, err := runParam(c)
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	sums, err := s.keys.RunSummaries(ctx, s.rdb, id)
	if err != nil {
		abort(c, err)
		return
	}
	status := records.RunStatus(sums[0][records.FieldStatus])
	switch {
	case len(sums[0]) == 0:
		abort(c, errNotFound("run %q not found", id))
		return
	case !status.Terminal():
		abort(c, errConflict("run %s is %s: only an ended run (succeeded, failed or cancelled) can be deleted; cancel it first", id, status))
		return
	}
	err = s.pruneEnded(ctx, id)
	switch {
	case errors.Is(err, errRunBusy):
		c.Header("Retry-After", "1")
		abort(c, errConflict("run %s is busy (an orchestrator is handling an event of it, e.g. a retry); try again", id))
		return
	case err != nil:
		abort(c, err)
		return
	}
	s.log.Info("run deleted", logkey.RunID, id, logkey.KeyName, requester(c))
	c.Status(http.StatusNoContent)
}

// pruneEnded deletes run (ended at any time), waiting up to deleteBusyWait
// for its lock; errRunBusy when it stayed held. A run that changed meanwhile
// (retried: no longer ended) is busy too; one deleted meanwhile is done.
func (s *Server) pruneEnded(ctx context.Context, run string) error {
	deadline := time.Now().Add(deleteBusyWait)
	for pause := 50 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		out, err := s.keys.PruneRun(ctx, s.rdb, run, math.MaxInt64)
		if err != nil || out != statestore.PruneKept {
			return err
		}
		if time.Now().Add(pause).After(deadline) {
			return errRunBusy
		}
		if err := clock.Sleep(ctx, pause); err != nil {
			return err
		}
	}
}
