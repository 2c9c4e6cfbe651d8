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
	"go.opentelemetry.io/otel/trace"
)

// errShutdown is the cancel cause of attempts still running when the drain
// timeout ends; they are handed back rather than reported.
var errShutdown = errors.New("worker shutting down")

// stopError is the cancel cause of an attempt whose heartbeat was refused:
// the orchestrator cancelled it or moved on, so its result is not published.
type stopError struct{ reason statestore.ClaimResult }

func (e stopError) Error() string { return "stopped: " + e.reason.String() }

// attempt is one claimed dispatch, from claim to published result. Its
// context is not kept here: execute derives it (begin) and passes it down;
// the attempt keeps only the means to cancel it.
type attempt struct {
	id       statestore.Attempt
	fp       uint64 // id's fingerprint
	dispatch *eventsv1.TaskDispatch
	handler  Handler
	ttl      time.Duration // claim TTL: the dispatch's heartbeat timeout
	logBase  slog.Handler  // the worker's: log() adds the attempt's attributes
	logp     atomic.Pointer[slog.Logger]
	logs     *logBuffer
	mask     *masker    // the secrets the attempt was given; set before its handler runs
	span     trace.Span // the attempt's task span while tracing is on (tracing.go), else nil

	// mu guards finished and started, and orders the start notice before
	// the result; it also guards cancel and refusal.
	mu       sync.Mutex
	finished bool
	started  time.Time
	// cancel cancels the attempt's context once execute has made it (nil
	// before). refusal is the first refused heartbeat's stopError: it
	// cancels the context as soon as there is one, and ends the heartbeats.
	cancel  context.CancelCauseFunc
	refusal *stopError

	beatMu     sync.Mutex // serialises heartbeats with handBack
	handedBack atomic.Bool

	gone     chan struct{} // closed when the attempt leaves the in-flight set: its heartbeats end
	goneOnce sync.Once
	// firstBeat starts the heartbeats when the first is due (newAttempt);
	// beats is the worker's count of heartbeat timers and goroutines, which
	// leave decrements for a timer it stops before it fired. Both nil for an
	// attempt that never had heartbeats.
	firstBeat *time.Timer
	beats     *sync.WaitGroup
}

// log is the attempt's logger (run, node, instance, attempt and handler as
// attributes), made when it is first asked for: at the default level most
// attempts log nothing, and a logger per attempt was about 250 bytes.
func (a *attempt) log() *slog.Logger {
	if l := a.logp.Load(); l != nil {
		return l
	}
	l := slog.New(a.logBase.WithAttrs(attemptAttrs(a.id, a.dispatch.GetHandler())))
	if a.logp.CompareAndSwap(nil, l) {
		return l
	}
	return a.logp.Load()
}

// leave closes gone once and disarms the first heartbeat if it is not due
// yet; one that already fired sees gone closed and ends by itself.
func (a *attempt) leave() {
	a.goneOnce.Do(func() {
		close(a.gone)
		if a.firstBeat != nil && a.firstBeat.Stop() {
			a.beats.Done()
		}
	})
}

// finish marks the attempt done; a start notice firing later publishes nothing.
func (a *attempt) finish() {
	a.mu.Lock()
	a.finished = true
	a.mu.Unlock()
}

// begin returns the attempt's context, a child of parent (the executors'
// context, cancelled with errShutdown when the drain time is up), and its
// cancel function. A heartbeat refused before begin cancels it at once.
func (a *attempt) begin(parent context.Context) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	a.mu.Lock()
	a.cancel = cancel
	s := a.refusal
	a.mu.Unlock()
	if s != nil {
		cancel(*s)
	}
	return ctx, cancel
}

// stop records a refused heartbeat and cancels the attempt's context with
// s, or has begin do it if the attempt has not started yet.
func (a *attempt) stop(s stopError) {
	a.mu.Lock()
	if a.refusal == nil {
		a.refusal = &s
	}
	cancel := a.cancel
	a.mu.Unlock()
	if cancel != nil {
		cancel(s)
	}
}

// refused reports whether a heartbeat of the attempt was refused.
func (a *attempt) refused() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refusal != nil
}

// stoppedBy reports the stopError an attempt's context ctx was cancelled
// with, if any.
func stoppedBy(ctx context.Context) (stopError, bool) {
	var s stopError
	ok := errors.As(context.Cause(ctx), &s)
	return s, ok
}

// inflight is the set of claimed attempts whose result is not yet published:
// the ones the heartbeat keeps alive. Safe for concurrent use.
type inflight struct {
	mu sync.Mutex
	m  map[statestore.Attempt]*attempt
	// recent is told when an attempt leaves.
	recent *recent
}

func newInflight(r *recent) *inflight {
	return &inflight{m: map[statestore.Attempt]*attempt{}, recent: r}
}

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
		f.recent.left(a.id, a.fp, time.Now())
	}
	f.mu.Unlock()
	a.leave()
}

// has reports whether attempt id is in flight here.
func (f *inflight) has(id statestore.Attempt) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.m[id]
	return ok
}

func (f *inflight) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.m)
}

// leaveAll ends the heartbeats of the attempts still in flight, whose
// results will not be published: shutdown calls it as maintenance stops.
func (f *inflight) leaveAll() {
	for _, a := range f.snapshot() {
		a.leave()
	}
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
