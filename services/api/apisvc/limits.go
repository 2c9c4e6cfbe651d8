package apisvc

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

// Limit labels of braid_api_limited_total and the names in problems.
const (
	limitRate    = "rate"
	limitStreams = "streams"
	limitWaiters = "waiters"
)

// concurrencyRetry is the Retry-After of a request refused because its
// client holds too many streams or waiters: when one frees is not known.
const concurrencyRetry = time.Second

// rateLimit charges an authenticated request to its client's token bucket
// (see clientOf) and refuses it with a 429 when the bucket is empty. It runs
// after authenticate, so a key's budget is its own wherever it is used from.
func (s *Server) rateLimit(c *gin.Context) {
	s.admit(c, s.clientOf(c))
}

// admit spends one of client's tokens; when none is left it answers 429
// with Retry-After, aborts and returns false.
func (s *Server) admit(c *gin.Context, client string) bool {
	if s.rates == nil {
		return true
	}
	ok, wait := s.rates.take(client, time.Now())
	if ok {
		return true
	}
	s.refuse(c, limitRate, wait, "%s is over its rate limit of %g requests/s (burst %d; BRAID_API_RATE_LIMIT, BRAID_API_RATE_BURST); retry after %d s",
		describeClient(client), s.cfg.RateLimit, s.cfg.RateBurst, retryAfter(wait))
	return false
}

// holdStream takes one of the client's stream slots, or answers 429 and
// returns false. The caller releases the slot with s.streams.release.
func (s *Server) holdStream(c *gin.Context, client string) bool {
	if s.streams.acquire(client) {
		return true
	}
	s.refuse(c, limitStreams, concurrencyRetry, "%s has %d event streams open, its limit (BRAID_API_MAX_STREAMS_PER_KEY); close one, or retry later",
		describeClient(client), s.cfg.MaxStreamsPerKey)
	return false
}

// refuse answers 429 Too Many Requests naming the limit, with Retry-After.
func (s *Server) refuse(c *gin.Context, limit string, wait time.Duration, format string, args ...any) {
	s.metrics.limited.WithLabelValues(limit).Inc()
	c.Header("Retry-After", strconv.Itoa(retryAfter(wait)))
	abort(c, errTooMany(format, args...))
}
