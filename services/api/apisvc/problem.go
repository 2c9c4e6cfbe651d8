package apisvc

import (
	"fmt"
	"net/http"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/braidhq/braid/pkg/dag"
)

// ProblemContentType is the media type of error responses (RFC 9457).
const ProblemContentType = apiwire.ProblemContentType

// Problem is an RFC 9457 problem details document (see apiwire).
type Problem = apiwire.Problem

// FieldError is one validation problem (see apiwire).
type FieldError = apiwire.FieldError

// apiError is an error with its HTTP status and problem type; handlers
// return it (through c.Error) and problem_map.go renders it.
type apiError struct {
	status int
	kind   string // slug of the problem type
	detail string
	errs   []FieldError
	cause  error // logged for 5xx, never shown
}

func (e *apiError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.status, e.kind, e.detail, e.cause)
	}
	return fmt.Sprintf("%d %s: %s", e.status, e.kind, e.detail)
}

func (e *apiError) Unwrap() error { return e.cause }

func newError(status int, kind, format string, args ...any) *apiError {
	return &apiError{status: status, kind: kind, detail: fmt.Sprintf(format, args...)}
}

func errBadRequest(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, "bad-request", format, args...)
}

func errUnauthorized(detail string) *apiError {
	return newError(http.StatusUnauthorized, "unauthorized", "%s", detail)
}

func errForbidden(format string, args ...any) *apiError {
	return newError(http.StatusForbidden, "forbidden", format, args...)
}

func errNotFound(format string, args ...any) *apiError {
	return newError(http.StatusNotFound, "not-found", format, args...)
}

func errConflict(format string, args ...any) *apiError {
	return newError(http.StatusConflict, "conflict", format, args...)
}

func errTooLarge(limit int64) *apiError {
	return newError(http.StatusRequestEntityTooLarge, "too-large", "request body exceeds the limit of %d bytes", limit)
}

// errTooMany is a 429: a limit of the client's was reached; the caller sets
// Retry-After.
func errTooMany(format string, args ...any) *apiError {
	return newError(http.StatusTooManyRequests, "too-many-requests", format, args...)
}

// errRequestTimeout is a 408: the request body did not arrive in time.
func errRequestTimeout(format string, args ...any) *apiError {
	return newError(http.StatusRequestTimeout, "request-timeout", format, args...)
}

func errUnsupportedMedia(got string) *apiError {
	return newError(http.StatusUnsupportedMediaType, "unsupported-media-type", "Content-Type %q is not supported; send application/json", got)
}

// errInvalid is a 422 listing every problem, up to dag.MaxProblems and a
// last one saying how many more there were (as dag.ValidationError does):
// an input of 40,000 unknown names would otherwise be answered with
// megabytes of problems.
func errInvalid(detail string, errs []FieldError) *apiError {
	e := newError(http.StatusUnprocessableEntity, "validation", "%s", detail)
	e.errs = errs
	if len(errs) > dag.MaxProblems+1 { // dag's own lists end at MaxProblems+1
		more := len(errs) - dag.MaxProblems
		e.errs = append(errs[:dag.MaxProblems:dag.MaxProblems], FieldError{Path: "$", Message: fmt.Sprintf("%d more problems not shown", more)})
	}
	return e
}

// errUnavailable is a 503: a dependency failed; cause is logged, not shown.
func errUnavailable(cause error, format string, args ...any) *apiError {
	e := newError(http.StatusServiceUnavailable, "unavailable", format, args...)
	e.cause = cause
	return e
}

// fieldErrors converts dag problems.
func fieldErrors(ps []dag.Problem) []FieldError {
	out := make([]FieldError, len(ps))
	for i, p := range ps {
		out[i] = FieldError{Path: p.Path, Message: p.Message}
	}
	return out
}

// problemTitles are the fixed titles of the problem types.
var problemTitles = map[string]string{
	"bad-request":            "Bad request",
	"unauthorized":           "Unauthorized",
	"forbidden":              "Forbidden",
	"not-found":              "Not found",
	"method-not-allowed":     "Method not allowed",
	"conflict":               "Conflict",
	"too-large":              "Request body too large",
	"unsupported-media-type": "Unsupported media type",
	"validation":             "Validation failed",
	"too-many-requests":      "Too many requests",
	"request-timeout":        "Request timeout",
	"unavailable":            "Service unavailable",
	"internal":               "Internal server error",
}
