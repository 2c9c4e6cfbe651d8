package apisvc

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
)

// logEnd is the data of the last event of a followed log.
type logEnd struct {
	Attempt int    `json:"attempt"`
	Reason  string `json:"reason"`
}

// followLogs streams an attempt's log as SSE: each line is a "line" event
// (data: apiwire.LogLine), and an "end" event follows the last line once the attempt
// is over. The stream also ends when the client leaves or the api stops.
// It counts against the client's MaxStreamsPerKey (429 past it).
func (s *Server) followLogs(c *gin.Context, t logTarget) {
	client := s.clientOf(c)
	if !s.holdStream(c, client) {
		return
	}
	defer s.streams.release(client)
	st := s.startSSE(c)
	s.metrics.sseClients.Inc()
	defer s.metrics.sseClients.Dec()
	tail := &logTail{key: t.key}
	poll := time.NewTicker(s.cfg.LogPoll)
	defer poll.Stop()
	keep := time.NewTicker(s.cfg.KeepAlive)
	defer keep.Stop()
	for {
		done, err := s.tailOnce(c.Request.Context(), st, tail, t)
		if err != nil || done {
			return
		}
		select {
		case <-c.Request.Context().Done():
			return
		case <-s.closing:
			return
		case <-keep.C:
			if st.comment("keep-alive") != nil {
				return
			}
		case <-poll.C:
		}
	}
}

// tailOnce sends the lines logged since the last call, then "end" when the
// attempt is over (checked before reading, so no line is missed).
func (s *Server) tailOnce(ctx context.Context, st *sseStream, tail *logTail, t logTarget) (done bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	over, err := s.attemptOver(ctx, t)
	if err != nil {
		return false, nil // transient: try again at the next poll
	}
	lines, err := tail.next(ctx, s.rdb)
	if err != nil {
		return false, nil
	}
	for _, l := range decodeLines(lines) {
		tail.sent++
		if err := st.send("line", strconv.Itoa(tail.sent), l); err != nil {
			return true, err
		}
	}
	if over {
		return true, st.send("end", "", logEnd{Attempt: t.attempt, Reason: "attempt finished"})
	}
	return false, nil
}

// logTail reads new entries of a capped Redis list. When the list was
// trimmed since the last read (it keeps only its newest lines), it finds the
// last entry it returned and continues after it.
type logTail struct {
	key  string
	seen int64  // entries read so far, as positions in the untrimmed list
	last string // the last entry returned
	sent int    // events sent (event ids)
}

// next returns the entries appended since the previous call.
func (t *logTail) next(ctx context.Context, rdb redis.Cmdable) ([]string, error) {
	if t.seen == 0 {
		return t.take(rdb.LRange(ctx, t.key, 0, -1).Result())
	}
	pipe := rdb.Pipeline()
	prev := pipe.LIndex(ctx, t.key, t.seen-1)
	fresh := pipe.LRange(ctx, t.key, t.seen, -1)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	if prev.Val() == t.last {
		return t.take(fresh.Val(), nil)
	}
	all, err := rdb.LRange(ctx, t.key, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	if i := slices.Index(reversed(all), t.last); i >= 0 {
		t.seen = int64(len(all) - i)
		return t.take(all[len(all)-i:], nil)
	}
	t.seen = 0
	return t.take(all, nil)
}

// take records entries as read.
func (t *logTail) take(entries []string, err error) ([]string, error) {
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	t.seen += int64(len(entries))
	t.last = entries[len(entries)-1]
	return entries, nil
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}
