package apisvc

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"regexp"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/gin-gonic/gin"
)

// ctxRequestID is the gin context key of the request id.
const ctxRequestID = "braid.request_id"

// clientRequestID is what an X-Request-Id sent by a client may hold to be reused.
var clientRequestID = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// requestIDs gives every request an id (the client's X-Request-Id when it is
// safe, else a random one) and echoes it in the response.
func requestIDs(c *gin.Context) {
	id := c.GetHeader("X-Request-Id")
	if !clientRequestID.MatchString(id) {
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	c.Set(ctxRequestID, id)
	c.Header("X-Request-Id", id)
}

// requestID returns the id requestIDs set.
func requestID(c *gin.Context) string { return c.GetString(ctxRequestID) }

// accessLog logs one line per request: method, route, path, status,
// duration and the key's name. It never logs headers, query strings or
// bodies, so keys and payloads stay out of the logs.
func (s *Server) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	level := slog.LevelInfo
	if c.Writer.Status() >= 500 {
		level = slog.LevelError
	}
	s.log.LogAttrs(c.Request.Context(), level, "request",
		slog.String(logkey.RequestID, requestID(c)),
		slog.String(logkey.Method, c.Request.Method),
		slog.String(logkey.Route, routeLabel(c)),
		slog.String(logkey.Path, c.Request.URL.Path),
		slog.Int(logkey.Status, c.Writer.Status()),
		slog.Int64(logkey.DurationMS, time.Since(start).Milliseconds()),
		slog.String(logkey.KeyName, requester(c)),
	)
}

// routeLabel is the matched route pattern, or "unmatched".
func routeLabel(c *gin.Context) string {
	if r := c.FullPath(); r != "" {
		return r
	}
	return "unmatched"
}
