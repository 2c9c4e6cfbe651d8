package apisvc

import (
	"context"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

// runEvents streams a run's state changes as SSE. It first sends a
// "snapshot" event (data: the run as GET /runs/{id} returns it; id: its
// seq), unless the client's Last-Event-ID shows it already has that seq,
// then an "update" event for every RunEvent with a greater seq (id: seq).
// A comment line every KeepAlive keeps proxies from closing the stream. A
// client that falls SSEBuffer events behind is disconnected; it reconnects
// with Last-Event-ID and gets a fresh snapshot. A client holds at most
// MaxStreamsPerKey streams at once (429 past it).
func (s *Server) runEvents(c *gin.Context) {
	id, err := runParam(c)
	if err != nil {
		abort(c, err)
		return
	}
	last, hasLast, err := lastEventID(c)
	if err != nil {
		abort(c, err)
		return
	}
	if err := s.runExists(c, id); err != nil { // before the feed opens for it
		abort(c, err)
		return
	}
	client := s.clientOf(c)
	if !s.holdStream(c, client) {
		return
	}
	defer s.streams.release(client)
	actx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.RequestTimeout)
	err = s.feed.acquire(actx)
	cancel()
	if err != nil {
		abort(c, errUnavailable(err, "live run events are unavailable; retry later"))
		return
	}
	defer s.feed.release()
	sub := s.hub.subscribe(id) // after the feed is positioned and before the snapshot, so no event falls in between
	defer s.hub.unsubscribe(sub)
	r, ctx, cancel := s.runFor(c, id, nil)
	if r == nil {
		cancel()
		return
	}
	snap := s.viewRun(ctx, r, time.Now())
	cancel()
	st := s.startSSE(c)
	s.metrics.sseClients.Inc()
	defer s.metrics.sseClients.Dec()
	after := snap.Seq
	if hasLast && last >= snap.Seq {
		after = last
	} else if st.send("snapshot", strconv.FormatUint(snap.Seq, 10), snap) != nil {
		return
	}
	s.pumpEvents(c, st, sub, after)
}

// pumpEvents forwards events with seq > after until the client leaves, the
// subscriber is dropped or the api stops.
func (s *Server) pumpEvents(c *gin.Context, st *sseStream, sub *subscriber, after uint64) {
	keep := time.NewTicker(s.cfg.KeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-c.Request.Context().Done():
			return
		case <-s.closing:
			return
		case <-sub.gone:
			return
		case <-keep.C:
			if st.comment("keep-alive") != nil {
				return
			}
		case ev := <-sub.events:
			if ev.Seq <= after {
				continue
			}
			after = ev.Seq
			if st.send("update", strconv.FormatUint(ev.Seq, 10), viewEvent(ev)) != nil {
				return
			}
		}
	}
}

// runExists answers 404 for a run that does not exist (one Redis round
// trip), so that a stream of an unknown or deleted run does not open the
// workflow.events feed — broker connections kept for FeedLinger — only to
// answer 404 after it. The run is read again, whole, once the feed is open.
func (s *Server) runExists(c *gin.Context, id string) error {
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	n, err := s.rdb.Exists(ctx, s.keys.Run(id)).Result()
	if err != nil {
		return err
	}
	if n == 0 {
		return errNotFound("run %q not found", id)
	}
	return nil
}

// lastEventID parses the Last-Event-ID header (a seq).
func lastEventID(c *gin.Context) (uint64, bool, error) {
	v := c.GetHeader("Last-Event-ID")
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, errBadRequest("Last-Event-ID %q is not an event id of this stream (a non-negative integer)", v)
	}
	return n, true, nil
}
