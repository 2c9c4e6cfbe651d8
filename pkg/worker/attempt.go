package worker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// errShutdown is the cancel cause of attempts still running when the drain
// timeout ends; they are handed back rather than reported.
var errShutdown = errors.New("worker shutting down")

// stopError is the cancel cause of an attempt whose heartbeat was refused:
// the orchestrator cancelled it or moved on, so its result is not published.
type stopError struct{ reason statestore.ClaimResult }

func (e stopError) Error() string { return "stopped: " + e.reason.String() }

// attempt is one claimed dispatch, from claim to published result.
type attempt struct {
	id       statestore.Attempt
	dispatch *eventsv1.TaskDispatch
	handler  Handler
	ttl      time.Duration // claim TTL: the dispatch's heartbeat timeout
	log      *slog.Logger
	logs     *logBuffer
	mask     *masker // the secrets the attempt was given; set before its handler runs

	ctx    context.Context // cancelled with errShutdown or a stopError
	cancel context.CancelCauseFunc

	mu       sync.Mutex // guards finished and started; orders the start notice before the result
	finished bool
	started  time.Time

	beatMu     sync.Mutex // serialises heartbeats with handBack
	handedBack atomic.Bool

	gone     chan struct{} // closed when the attempt leaves the in-flight set: its heartbeats end
	goneOnce sync.Once
}

// leave closes gone once.
func (a *attempt) leave() { a.goneOnce.Do(func() { close(a.gone) }) }

// finish marks the attempt done; a start notice firing later publishes nothing.
func (a *attempt) finish() {
	a.mu.Lock()
	a.finished = true
	a.mu.Unlock()
}

// stopped reports the stopError the attempt was cancelled with, if any.
func (a *attempt) stopped() (stopError, bool) {
	var s stopError
	ok := errors.As(context.Cause(a.ctx), &s)
	return s, ok
}

// inflight is the set of claimed attempts whose result is not yet published:
// the ones the heartbeat keeps alive. Safe for concurrent use.
type inflight struct {
	mu sync.Mutex
	m  map[statestore.Attempt]*attempt
}

func newInflight() *inflight { return &inflight{m: map[statestore.Attempt]*attempt{}} }

func (f *inflight) add(a *attempt) {
	f.mu.Lock()
	f.m[a.id] = a
	f.mu.Unlock()
}

// remove takes a out of the set and ends its heartbeats.
func (f *inflight) remove(a *attempt) {
	f.mu.Lock()
	if f.m[a.id] == a {
		delete(f.m, a.id)
	}
	f.mu.Unlock()
	a.leave()
}

func (f *inflight) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.m)
}

// snapshot returns the attempts in flight now.
func (f *inflight) snapshot() []*attempt {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*attempt, 0, len(f.m))
	for _, a := range f.m {
		out = append(out, a)
	}
	return out
}
