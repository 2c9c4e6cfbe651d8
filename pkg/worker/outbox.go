package worker

import (
	"context"
	"strings"
	"sync"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/worker/internal/failpoint"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"go.opentelemetry.io/otel/trace"
)

// outgoing is one TaskResult waiting to be published.
type outgoing struct {
	result *eventsv1.TaskResult
	// final is the attempt this result ends (nil for start notices and
	// unknown-handler failures); it leaves the in-flight set once published.
	final *attempt
	// trace is the span context the result follows from (the attempt's
	// task span; invalid while tracing is off).
	trace trace.SpanContext
}

// outbox is the FIFO queue between executors and the publisher. It never
// blocks a producer; push after close reports false. Safe for concurrent use.
type outbox struct {
	mu     sync.Mutex
	items  []outgoing
	closed bool
	wake   chan struct{} // capacity 1: "something changed"
}

func newOutbox() *outbox { return &outbox{wake: make(chan struct{}, 1)} }

// push queues it; false when the outbox is closed (the worker stopped).
func (o *outbox) push(it outgoing) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	o.items = append(o.items, it)
	o.signal()
	return true
}

// close lets next return what is queued, then report the end.
func (o *outbox) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	o.signal()
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// next blocks until something is queued and returns all of it; ok is false
// once the outbox is closed and empty, or ctx is done.
func (o *outbox) next(ctx context.Context) (batch []outgoing, ok bool) {
	for {
		o.mu.Lock()
		batch, o.items = o.items, nil
		closed := o.closed
		o.mu.Unlock()
		if len(batch) > 0 {
			return batch, true
		}
		if closed {
			return nil, false
		}
		select {
		case <-o.wake:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// publishLoop publishes everything queued in one Producer.Publish call per
// round (take one, drain the rest, publish: no timers) until the outbox is
// closed and empty or ctx — the hard stop — is done.
func (w *Worker) publishLoop(ctx context.Context, prod eventbus.Publisher) {
	for {
		batch, ok := w.out.next(ctx)
		if !ok {
			return
		}
		w.publish(ctx, prod, batch)
	}
}

// publish sends batch, retrying with backoff until it is acknowledged or ctx
// is done. A batch given up on is lost: its attempts' claims expire and the
// orchestrator's reconciler retries them.
func (w *Worker) publish(ctx context.Context, prod eventbus.Publisher, batch []outgoing) {
	msgs := make([]eventbus.Message, 0, len(batch))
	for i := range batch {
		it := &batch[i]
		// Protobuf refuses a string that is not UTF-8: a handler's error
		// text may carry any bytes (a tool's stderr).
		it.result.Error = strings.ToValidUTF8(it.result.GetError(), "\uFFFD")
		m, err := eventbus.NewMessage(eventsv1.TopicTaskComplete, it.result.GetRunId(), it.result)
		if err != nil {
			// Never dropped: the attempt would stay in flight, its claim
			// renewed, and its run would wait for ever.
			w.log.Error("encode task result: publishing a failure instead", logkey.RunID, it.result.GetRunId(), logkey.NodeID, it.result.GetNodeId(), logkey.Err, err)
			it.result = unencodable(it.result, err)
			if m, err = eventbus.NewMessage(eventsv1.TopicTaskComplete, it.result.GetRunId(), it.result); err != nil {
				continue // only ids left, which came in a decoded dispatch
			}
		}
		traceResult(&m, it.trace)
		msgs = append(msgs, m)
	}
	for try := 0; ; try++ {
		err := prod.Publish(ctx, msgs...)
		if err == nil {
			break
		}
		w.log.Warn("publish task results", logkey.Results, len(msgs), logkey.Try, try+1, logkey.Err, err)
		if clock.Sleep(ctx, backoff(try)) != nil {
			w.log.Error("task results lost at shutdown; their claims expire and the reconciler retries them", logkey.Results, len(msgs))
			return
		}
	}
	w.stats.published.Add(int64(len(msgs)))
	for _, it := range batch {
		if it.final == nil {
			continue
		}
		if failpoint.Enabled {
			failpoint.ExitAfterResult(w.log, it.result.GetRunId(), it.result.GetNodeId())
		}
		w.inflight.remove(it.final)
		it.final.endResultSpan(it.result)
	}
}
