package apisvc

import (
	"net/http"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/gin-gonic/gin"
)

// MaxWait is the longest ?wait= a run request may ask for.
const MaxWait = 60 * time.Second

// waitQuery parses ?wait=, how long a request may wait for its run to end:
// a duration such as 30s or 1500ms, or whole seconds, from 0 (no wait) to
// MaxWait. Absent means 0.
func waitQuery(c *gin.Context) (time.Duration, error) {
	v, ok := c.GetQuery("wait")
	if !ok {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		n, aerr := strconv.Atoi(v)
		d, err = time.Duration(n)*time.Second, aerr
	}
	if err != nil || d < 0 || d > MaxWait {
		return 0, errBadRequest("query parameter wait=%q must be a duration from 0s to %s (e.g. wait=30s, wait=500ms, wait=10)", v, MaxWait)
	}
	return d, nil
}

// register adds a waiter for run that may wait until until, and moves the
// response's write deadline past the wait (see deadlines.go). It answers 429
// when the client has MaxWaitersPerKey requests waiting already, and 503
// with Retry-After when MaxWaiters requests wait in all.
func (s *Server) register(c *gin.Context, run string, until time.Time) (*waiter, bool) {
	client := s.clientOf(c)
	if !s.waits.acquire(client) {
		s.refuse(c, limitWaiters, concurrencyRetry, "%s has %d requests waiting for runs, its limit (BRAID_API_MAX_WAITERS_PER_KEY); retry later, or ask without wait",
			describeClient(client), s.cfg.MaxWaitersPerKey)
		return nil, false
	}
	w, ok := s.endings.add(run)
	if !ok {
		s.waits.release(client)
		c.Header("Retry-After", "1")
		abort(c, errUnavailable(nil, "%d requests are waiting for runs already; retry later, or ask without wait", s.cfg.MaxWaiters))
		return nil, false
	}
	w.client = client
	s.awaitSubscribed(c, w, until)
	s.metrics.waiting.Inc()
	writeBy(c, until.Add(s.cfg.WriteTimeout))
	return w, true
}

// awaitSubscribed waits until announcements reach the api (endings), so
// that a run ending from now on is announced to w: the api subscribes to
// the run-ended channel only while requests wait. It waits no longer than
// WaitRecheck or until; if the subscription is not confirmed by then, the
// re-check (endings.recheck) stands in for the announcement.
func (s *Server) awaitSubscribed(c *gin.Context, w *waiter, until time.Time) {
	select {
	case <-w.subscribed:
		return
	default:
	}
	t := time.NewTimer(min(s.cfg.WaitRecheck, time.Until(until)))
	defer t.Stop()
	select {
	case <-w.subscribed:
	case <-t.C:
	case <-s.closing:
	case <-c.Request.Context().Done():
	}
}

// unregister removes a waiter added by register.
func (s *Server) unregister(w *waiter) {
	s.endings.remove(w)
	s.waits.release(w.client)
	s.metrics.waiting.Dec()
}

// awaitEnd waits until w's run has ended or until passes, and returns the
// run as last read: it reads the run, and while the run is not terminal
// waits for an announcement (a run-ended notice, or endings.recheck finding
// the run ended), until, or the api shutting down (then it reads once more
// and returns). An announcement that carries the run answers without a
// read. With created, the caller has just requested the run, so the first
// read is skipped: it cannot have ended yet. A nil run and nil error mean
// the client left.
func (s *Server) awaitEnd(c *gin.Context, w *waiter, until time.Time, created bool) (*loadedRun, error) {
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	for read := !created; ; read = true {
		if read {
			ctx, cancel := s.requestCtx(c)
			r, err := s.loadRun(ctx, w.run)
			cancel()
			if err != nil || r.status().Terminal() || !time.Now().Before(until) {
				return r, err
			}
		}
		select {
		case <-w.ended:
			if r := s.announcedRun(c, w); r != nil {
				return r, nil
			}
		case <-t.C:
		case <-s.closing:
			until = time.Now()
		case <-c.Request.Context().Done():
			return nil, nil
		}
	}
}

// announcedRun is the ended run w's latest announcement carried, or nil
// when it carried none (or not an ended run: then the caller reads it).
func (s *Server) announcedRun(c *gin.Context, w *waiter) *loadedRun {
	st := w.stored.Swap(nil)
	if st == nil || !st.Exists() {
		return nil
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	r, err := s.compileRun(ctx, w.run, *st)
	if err != nil || !r.status().Terminal() {
		return nil
	}
	return r
}

// answerRun answers a waiting GET /runs/{id}: the run once ended, or as it
// is when the wait is over.
func (s *Server) answerRun(c *gin.Context, id string, wait time.Duration) {
	until := time.Now().Add(wait)
	w, ok := s.register(c, id, until)
	if !ok {
		return
	}
	defer s.unregister(w)
	r, err := s.awaitEnd(c, w, until, false)
	switch {
	case err != nil:
		abort(c, err)
	case r != nil:
		s.respondRun(c, r)
	}
}

// answerStarted answers a run request whose run was accepted as acc:
// without a waiter, 202 with acc at once; with one, 200 with the run when
// it ends before until, else 202 with acc (the run goes on; GET
// /runs/{id}?wait= waits more). created says the run was requested just
// now (not an idempotent replay). A failure to read the run while waiting
// is logged and answered with the 202: the run was accepted all the same.
func (s *Server) answerStarted(c *gin.Context, acc runAccepted, w *waiter, until time.Time, created bool) {
	c.Header("Location", "/runs/"+acc.RunID)
	if w == nil {
		respond(c, http.StatusAccepted, acc)
		return
	}
	r, err := s.awaitEnd(c, w, until, created)
	switch {
	case err != nil:
		s.log.Warn("read run while waiting for it to end; answering accepted", logkey.RunID, acc.RunID, logkey.Err, err)
		respond(c, http.StatusAccepted, acc)
	case r == nil: // the client left
	case r.status().Terminal():
		s.respondRun(c, r)
	default:
		respond(c, http.StatusAccepted, acc)
	}
}

// respondRun answers 200 with the view of a loaded run.
func (s *Server) respondRun(c *gin.Context, r *loadedRun) {
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	run := s.viewRun(ctx, r, time.Now())
	respondWithRun(c, &run)
}
