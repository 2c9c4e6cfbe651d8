package apisvc

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime/debug"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
)

// abort records err for the problems middleware and stops the chain.
func abort(c *gin.Context, err error) {
	_ = c.Error(err)
	c.Abort()
}

// problems renders the last error a handler recorded as problem+json, unless
// the handler already wrote a response. It is the only place errors become
// HTTP responses.
func (s *Server) problems(c *gin.Context) {
	c.Next()
	if len(c.Errors) == 0 || c.Writer.Written() {
		return
	}
	e := s.toAPIError(c, c.Errors.Last().Err)
	writeProblem(c, e)
}

// writeProblem writes e as problem+json.
func writeProblem(c *gin.Context, e *apiError) {
	title := problemTitles[e.kind]
	if title == "" {
		title = http.StatusText(e.status)
	}
	c.Header("Content-Type", ProblemContentType)
	c.Header("Cache-Control", "no-store")
	c.Status(e.status)
	_ = jsonEncode(c.Writer, Problem{
		Type: "urn:braid:problem:" + e.kind, Title: title, Status: e.status,
		Detail: e.detail, Instance: c.Request.URL.EscapedPath(), Errors: e.errs,
	})
}

// toAPIError maps any error to an apiError, once, logging server faults.
func (s *Server) toAPIError(c *gin.Context, err error) *apiError {
	var ae *apiError
	var ve *dag.ValidationError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &mbe):
		ae = errTooLarge(mbe.Limit)
	case errors.As(err, &ve):
		ae = errInvalid(ve.Error(), fieldErrors(ve.Problems))
	case errors.Is(err, statestore.ErrNotFound):
		ae = errNotFound("%v", err)
	case unavailable(err):
		ae = errUnavailable(err, "a dependency is unavailable; retry later")
	default:
		ae = newError(http.StatusInternalServerError, "internal", "internal error (request %s); see the api logs", requestID(c))
		ae.cause = err
	}
	if ae.status >= 500 {
		s.log.Error("request failed", logkey.RequestID, requestID(c), logkey.Route, c.FullPath(), logkey.Status, ae.status, logkey.Err, err)
	}
	return ae
}

// unavailable reports errors of an unreachable or slow dependency.
func unavailable(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redis.ErrClosed)
}

// recoverer turns a panic into a logged 500 problem.
func (s *Server) recoverer(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r)
			}
			s.log.Error("handler panicked", logkey.RequestID, requestID(c), logkey.Route, c.FullPath(), logkey.Panic, r, logkey.Stack, string(debug.Stack()))
			if !c.Writer.Written() {
				writeProblem(c, newError(http.StatusInternalServerError, "internal", "internal error (request %s); see the api logs", requestID(c)))
			}
			c.Abort()
		}
	}()
	c.Next()
}

// noRoute and noMethod answer unknown paths and methods with problems.
func noRoute(c *gin.Context) {
	abort(c, errNotFound("no endpoint %s %s; see /openapi.json", c.Request.Method, c.Request.URL.Path))
}

func noMethod(c *gin.Context) {
	e := newError(http.StatusMethodNotAllowed, "method-not-allowed", "%s is not allowed on %s; see /openapi.json", c.Request.Method, c.Request.URL.Path)
	abort(c, e)
}
