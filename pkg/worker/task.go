package worker

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Task is one attempt of one node instance, as a Handler sees it. The config
// has every template already resolved by the orchestrator.
type Task struct {
	RunID    string
	Workflow string
	Version  int
	NodeID   string
	// Instance is the fan-out index (0 for plain nodes) and Count the fan-out size (1 for plain nodes).
	Instance int
	Count    int
	// Attempt is 1-based.
	Attempt int
	Handler string
	// Config is the node's resolved config as JSON (never nil; "null" when absent).
	Config json.RawMessage
	// IdempotencyKey is stable per (run, node, instance, attempt); pass it to side effects.
	IdempotencyKey string
	// Deadline is when the attempt times out (zero: no timeout). The ctx given to Handle carries it too.
	Deadline time.Time
	// WorkerID identifies the executing worker.
	WorkerID string
	// Log appends one line to the attempt's log (stream "stdout", "stderr" or "handler").
	// It is never nil, safe for concurrent use, cheap, and caps what it keeps.
	Log LogFunc
}

// LogFunc records one log line of an attempt.
type LogFunc func(stream, line string)

// Handler executes tasks of one handler kind.
//
// Handle must return when ctx is done (cancel, timeout, worker shutdown),
// releasing everything it started (a shell handler kills its process group).
// The returned output is marshalled to JSON; it becomes the node's output and
// what downstream templates read. A non-nil error fails the attempt: it is
// retried per the node's retry policy unless wrapped with Permanent.
// Handle is called from several goroutines at once.
type Handler interface {
	Handle(ctx context.Context, task *Task) (output any, err error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, task *Task) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, task *Task) (any, error) { return f(ctx, task) }

// permanentError marks an error that retrying cannot fix.
type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

// Permanent wraps err so that the attempt fails without further retries.
// Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err: err}
}

// IsPermanent reports whether err (or an error it wraps) was marked Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}
