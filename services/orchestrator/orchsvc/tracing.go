package orchsvc

import (
	"context"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/tracing"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/braidhq/braid/services/orchestrator/core"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// How a batch is traced (only while tracing is on; off, every function here
// returns at once). Each run's share of a batch is one span, "handle
// <event>", a child of the span that sent its first event (the api's
// request for a start or a control, a worker's attempt for a result) or,
// for events that carry no trace context (timers, reconciles, nudges), of
// the span that requested the run (records.FieldTrace). Its children time
// the steps that concern the run: apply, write, publish. The dispatches and
// run events the batch publishes for the run carry the handle span's
// context, so the workers' spans and the next results continue the trace:
// one run, one trace.
//
// The spans are given the batch's own timestamps (the write and publish
// are one call for the whole batch, so every run's write span shows that
// call).

var orchTracer = tracing.Tracer("orchestrator")

// traceOpen opens g's handle span, started at the batch's start, once its
// run is loaded (so the stored trace is known).
func traceOpen(g *runBatch, batchStart time.Time) {
	if !tracing.Enabled() || g.traced != nil {
		return
	}
	parent, links := context.Background(), []trace.Link(nil)
	for _, in := range g.events {
		sc := trace.SpanContextFromContext(tracing.Extract(context.Background(), &in.msg.Headers))
		switch {
		case !sc.IsValid():
		case !trace.SpanContextFromContext(parent).IsValid():
			parent = trace.ContextWithRemoteSpanContext(parent, sc)
		default:
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	if g.o != nil && g.o.trace == "" { // an optimistic start's run was not loaded
		for _, in := range g.events {
			if in.start != nil {
				g.o.trace = in.msg.Headers.Get(eventsv1.HeaderTraceparent)
			}
		}
	}
	if !trace.SpanContextFromContext(parent).IsValid() && g.o != nil {
		parent = tracing.FromTraceparent(parent, g.o.trace)
	}
	attrs := []attribute.KeyValue{tracing.AttrRunID.String(g.run), tracing.AttrEvents.Int(len(g.events))}
	if len(g.events) == 1 {
		attrs = append(attrs, eventAttrs(g.events[0])...)
	}
	_, g.traced = orchTracer.Start(parent, "handle "+eventName(g.events), trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithTimestamp(batchStart), trace.WithLinks(links...), trace.WithAttributes(attrs...))
}

// applyTraced is apply, inside g's handle span with a child span timing it
// while tracing is on.
func (s *Service) applyTraced(g *runBatch, now int64, batchStart time.Time) {
	if !tracing.Enabled() {
		s.apply(g, now)
		return
	}
	traceOpen(g, batchStart)
	start := time.Now()
	s.apply(g, now)
	if g.traced == nil {
		return
	}
	if r := g.o.run; r != nil {
		g.traced.SetAttributes(tracing.AttrWorkflow.String(r.Workflow), tracing.AttrStatus.String(string(r.Status)))
	}
	_, sp := orchTracer.Start(trace.ContextWithSpan(context.Background(), g.traced), "apply", trace.WithTimestamp(start))
	sp.SetAttributes(attribute.Int("braid.dispatches", len(g.eff.Dispatches)))
	sp.End()
}

// traceNow is the time a traced step starts (zero while tracing is off).
func traceNow() time.Time {
	if !tracing.Enabled() {
		return time.Time{}
	}
	return time.Now()
}

// traceFire opens the span of a schedule's fire, the root of the trace of
// the run it requests (a no-op span while tracing is off).
func traceFire(ctx context.Context, schedule, workflow string) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return ctx, trace.SpanFromContext(ctx)
	}
	return orchTracer.Start(ctx, "schedule fire", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("braid.schedule_id", schedule), tracing.AttrWorkflow.String(workflow)))
}

// logCtx is a context holding g's handle span, for the log lines about
// g's run (they then carry trace_id and span_id).
func (g *runBatch) logCtx() context.Context {
	if g.traced == nil {
		return context.Background()
	}
	return trace.ContextWithSpan(context.Background(), g.traced)
}

// eventName names what a run's share of a batch handles: its first event's
// kind, "+N" more when there are several.
func eventName(events []inbound) string {
	if len(events) == 0 {
		return "events"
	}
	name := eventKind(events[0])
	if len(events) > 1 {
		name += " and more"
	}
	return name
}

// eventKind is one event's kind, by a fixed set of names.
func eventKind(in inbound) string {
	switch in.ev.(type) {
	case core.Start:
		return "start"
	case core.Result:
		return "result"
	case core.Timer:
		return "timer"
	case core.Reconcile:
		return "reconcile"
	case core.Control:
		return "control"
	}
	return "event"
}

// eventAttrs describe a result event: which attempt, and how it ended.
func eventAttrs(in inbound) []attribute.KeyValue {
	r, ok := in.ev.(core.Result)
	if !ok {
		return nil
	}
	return []attribute.KeyValue{tracing.AttrNodeID.String(r.Node), tracing.AttrInstance.Int(r.Instance),
		tracing.AttrAttempt.Int(r.Attempt), tracing.AttrStatus.String(resultStatus(r.Status))}
}

// resultStatus names a result status for a span.
func resultStatus(s core.ResultStatus) string {
	switch s {
	case core.ResultRunning:
		return "running"
	case core.ResultSucceeded:
		return "succeeded"
	case core.ResultFailed:
		return "failed"
	}
	return "unknown"
}

// traceStep records one step of the batch (apply, write, publish) from
// start to now as a child span of each run's handle span.
func traceStep(groups []*runBatch, name string, start time.Time) {
	if !tracing.Enabled() {
		return
	}
	end := time.Now()
	for _, g := range groups {
		if g.traced == nil {
			continue
		}
		ctx := trace.ContextWithSpan(context.Background(), g.traced)
		_, sp := orchTracer.Start(ctx, name, trace.WithTimestamp(start))
		sp.End(trace.WithTimestamp(end))
	}
}

// traceInject gives msgs (what g's run publishes) g's handle span as parent.
func traceInject(g *runBatch, msgs []eventbus.Message) {
	if g.traced == nil {
		return
	}
	ctx := trace.ContextWithSpan(context.Background(), g.traced)
	for i := range msgs {
		tracing.Inject(ctx, &msgs[i].Headers)
	}
}

// traceClose ends the handle spans of groups; failed marks them failed
// (the batch is retried as a whole, under new spans).
func traceClose(groups []*runBatch, failed error) {
	for _, g := range groups {
		if g.traced == nil {
			continue
		}
		if failed != nil {
			tracing.Fail(g.traced, failed.Error())
		}
		g.traced.End()
		g.traced = nil
	}
}
