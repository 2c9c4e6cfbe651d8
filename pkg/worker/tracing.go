package worker

import (
	"context"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/tracing"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// How an attempt is traced (only while tracing is on; off, every function
// here returns at once): one span per attempt, "task <handler>", a child of
// the orchestrator's span that dispatched it, from the claim to the
// acknowledged result. Its children are "claim" (the batch's claim round
// trip) and "execute <handler>", under which the handler's own calls make
// their spans (the http and llm handlers' requests). The result carries the
// task span's context, so the orchestrator's handling of it continues the
// run's trace.

var workerTracer = tracing.Tracer("worker")

// traceAttempt opens a's task span, started when the batch's claims were
// sent and with the claim round trip as its first child.
func (w *Worker) traceAttempt(a *attempt, headers eventbus.Headers, claimed, answered time.Time) {
	if !tracing.Enabled() {
		return
	}
	d := a.dispatch
	attrs := []attribute.KeyValue{
		tracing.AttrRunID.String(a.id.Run), tracing.AttrWorkflow.String(d.GetWorkflow()),
		tracing.AttrNodeID.String(a.id.Node), tracing.AttrInstance.Int(a.id.Instance),
		tracing.AttrAttempt.Int(a.id.Attempt), tracing.AttrHandler.String(d.GetHandler()),
		tracing.AttrWorker.String(w.cfg.ID),
	}
	if at := d.GetDispatchedAtMs(); at > 0 {
		attrs = append(attrs, attribute.Int64("braid.queue_wait_ms", max(claimed.UnixMilli()-at, 0)))
	}
	parent := tracing.Extract(context.Background(), &headers)
	_, a.span = workerTracer.Start(parent, "task "+d.GetHandler(), trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithTimestamp(claimed), trace.WithAttributes(attrs...))
	_, c := workerTracer.Start(trace.ContextWithSpan(context.Background(), a.span), "claim", trace.WithTimestamp(claimed))
	c.End(trace.WithTimestamp(answered))
}

// traceNow is the time, while tracing is on (zero while it is off: untraced
// batches read no clock for it).
func traceNow() time.Time {
	if !tracing.Enabled() {
		return time.Time{}
	}
	return time.Now()
}

// withSpan returns ctx carrying a's task span (ctx itself when untraced).
func (a *attempt) withSpan(ctx context.Context) context.Context {
	if a.span == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, a.span)
}

// spanContext is a's task span's context, for the results it publishes.
func (a *attempt) spanContext() trace.SpanContext {
	if a == nil || a.span == nil {
		return trace.SpanContext{}
	}
	return a.span.SpanContext()
}

// startExecute opens the "execute <handler>" span under a's task span; the
// handler runs with the returned context. end closes it.
func (a *attempt) startExecute(ctx context.Context) (context.Context, func(err error)) {
	if a.span == nil {
		return ctx, func(error) {}
	}
	ctx, sp := workerTracer.Start(ctx, "execute "+a.dispatch.GetHandler())
	return ctx, func(err error) {
		if err != nil {
			tracing.Fail(sp, a.mask.str(err.Error()))
		}
		sp.End()
	}
}

// endSpan ends a's task span, recording how the attempt ended.
func (a *attempt) endSpan(status string, failure string) {
	if a == nil || a.span == nil {
		return
	}
	a.span.SetAttributes(tracing.AttrStatus.String(status))
	if failure != "" {
		tracing.Fail(a.span, failure)
	}
	a.span.End()
}

// endResultSpan ends a's task span once its final result r is acknowledged.
func (a *attempt) endResultSpan(r *eventsv1.TaskResult) {
	if r.GetStatus() == eventsv1.TaskStatus_TASK_STATUS_SUCCEEDED {
		a.endSpan("succeeded", "")
		return
	}
	a.endSpan("failed", r.GetError())
}

// traceResult gives a result message the span context it follows from.
func traceResult(m *eventbus.Message, sc trace.SpanContext) {
	if sc.IsValid() {
		tracing.Inject(trace.ContextWithSpanContext(context.Background(), sc), &m.Headers)
	}
}
