package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/braidhq/braid/pkg/metrics"
	"github.com/braidhq/braid/pkg/metrics/catalog"
	"github.com/prometheus/client_golang/prometheus"
)

// errTimedOut marks a handler error returned after the dispatch's timeout.
var errTimedOut = errors.New("timed out")

// The outcome label values of braid_node_attempts_total.
const (
	outcomeSucceeded = iota
	outcomeFailed
	outcomeTimedOut
	outcomeStopped
	outcomeHandedBack
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"succeeded", "failed", "timed_out", "stopped", "handed_back"}

// handlerMetrics are one handler's label children, curried at New so that
// an attempt costs two observations and a counter add.
type handlerMetrics struct {
	wait, duration prometheus.Observer
	attempts       [numOutcomes]prometheus.Counter
}

// workerMetrics are the worker's attempt metrics by handler. The map is
// read-only after New: safe for concurrent use.
type workerMetrics struct {
	byHandler map[string]*handlerMetrics
	skipped   prometheus.Counter
}

// newWorkerMetrics registers the attempt metrics on r (a throwaway
// registry when nil) with a child per handler name and outcome.
func newWorkerMetrics(r prometheus.Registerer, handlers []string) (*workerMetrics, error) {
	if r == nil {
		r = prometheus.NewRegistry()
	}
	attempts, err := metrics.NewCounterVec(r, catalog.NodeAttempts)
	if err != nil {
		return nil, fmt.Errorf("worker metrics: %w", err)
	}
	wait, err := metrics.NewHistogramVec(r, catalog.TaskQueueWait, metrics.TaskBuckets)
	if err != nil {
		return nil, fmt.Errorf("worker metrics: %w", err)
	}
	dur, err := metrics.NewHistogramVec(r, catalog.TaskDuration, metrics.TaskBuckets)
	if err != nil {
		return nil, fmt.Errorf("worker metrics: %w", err)
	}
	skipped, err := metrics.NewCounter(r, catalog.DispatchesSkipped)
	if err != nil {
		return nil, fmt.Errorf("worker metrics: %w", err)
	}
	m := &workerMetrics{byHandler: map[string]*handlerMetrics{}, skipped: skipped}
	for _, h := range handlers {
		hm := &handlerMetrics{wait: wait.WithLabelValues(h), duration: dur.WithLabelValues(h)}
		for o, name := range outcomeNames {
			hm.attempts[o] = attempts.WithLabelValues(h, name)
		}
		m.byHandler[h] = hm
	}
	return m, nil
}

// of returns handler's children: a handler of this worker's (it claims
// no other's dispatches).
func (m *workerMetrics) of(handler string) *handlerMetrics { return m.byHandler[handler] }

// began observes a's queue wait: from its dispatch (the node queued by the
// orchestrator, on its clock) to its handler's start here.
func (m *workerMetrics) began(a *attempt, started time.Time) {
	ms := a.dispatch.GetDispatchedAtMs()
	if ms <= 0 {
		return
	}
	m.of(a.dispatch.GetHandler()).wait.Observe(max(started.Sub(time.UnixMilli(ms)).Seconds(), 0))
}

// finished counts a's outcome and observes its duration; ctx is the
// attempt's context and err its handler's error.
func (m *workerMetrics) finished(ctx context.Context, a *attempt, err error, at time.Time) {
	hm := m.of(a.dispatch.GetHandler())
	hm.duration.Observe(at.Sub(a.started).Seconds())
	hm.attempts[attemptOutcome(ctx, err)].Inc()
}

// skip counts a dispatch left to another pool.
func (m *workerMetrics) skip() { m.skipped.Inc() }

// attemptOutcome tells how an attempt ended from its context and error,
// the way conclude does.
func attemptOutcome(ctx context.Context, err error) int {
	_, stopped := stoppedBy(ctx)
	switch {
	case stopped:
		return outcomeStopped
	case err == nil:
		return outcomeSucceeded
	case errors.Is(context.Cause(ctx), errShutdown):
		return outcomeHandedBack
	case errors.Is(err, errTimedOut):
		return outcomeTimedOut
	}
	return outcomeFailed
}
