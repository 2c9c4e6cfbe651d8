// Package tracing is Braid's OpenTelemetry tracing: one run is one trace,
// whose spans cover the api request that started it, the orchestrator's
// handling of every event of the run, and each attempt on a worker with the
// handler's own calls. The W3C trace context travels in the traceparent
// header of every Kafka record (eventsv1.HeaderTraceparent) and in the run
// hash (records.FieldTrace), so events that carry none (timers, the
// reconciler) still join the run's trace.
//
// Tracing is off unless the standard OpenTelemetry environment turns it on
// (Setup): then spans go to an OTLP endpoint over HTTP/protobuf or gRPC.
// While it is off Enabled is false and every helper here returns at once,
// so the services pay one atomic load per call site and nothing else.
//
// Spans carry ids (run, node, instance, attempt, worker), names (workflow,
// handler, topic) and outcomes; never a config, input, output or secret.
package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/braidhq/braid/pkg/buildinfo"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of every tracer; Tracer adds the
// service ("github.com/braidhq/braid/orchestrator").
const Scope = "github.com/braidhq/braid"

// Span attribute keys Braid sets, beside OpenTelemetry's own conventions
// (messaging.*, http.*, server.*).
const (
	AttrRunID    = attribute.Key("braid.run_id")
	AttrWorkflow = attribute.Key("braid.workflow")
	AttrNodeID   = attribute.Key("braid.node_id")
	AttrInstance = attribute.Key("braid.instance")
	AttrAttempt  = attribute.Key("braid.attempt")
	AttrHandler  = attribute.Key("braid.handler")
	AttrWorker   = attribute.Key("braid.worker_id")
	AttrStatus   = attribute.Key("braid.status")
	AttrEvents   = attribute.Key("braid.events")
)

var on atomic.Bool

// Enabled says whether Setup turned tracing on in this process.
func Enabled() bool { return on.Load() }

// prop is the W3C trace-context propagator (traceparent, tracestate).
var prop = propagation.TraceContext{}

// Tracer returns the tracer of one of Braid's services ("api",
// "orchestrator", "worker", "handler").
func Tracer(service string) trace.Tracer { return otel.Tracer(Scope + "/" + service) }

// Setup turns tracing on when the environment asks for it, following the
// OpenTelemetry SDK's variables:
//
//   - OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none: off.
//   - OTEL_TRACES_EXPORTER=otlp, or (unset) an endpoint in
//     OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: on.
//     Otherwise off: tracing is off by default.
//   - OTEL_EXPORTER_OTLP_PROTOCOL (or _TRACES_PROTOCOL): http/protobuf
//     (the default) or grpc. The exporters read their other OTEL_EXPORTER_OTLP_*
//     variables themselves (endpoint, headers, TLS, timeout, compression).
//   - OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES add to the resource
//     (service.name defaults to service, service.version to the build).
//   - OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_* tune sampling and batching.
//
// It installs the tracer provider and the W3C propagator globally and
// returns the shutdown that flushes spans still buffered (call it once,
// before exit, with a bounded context); when tracing stays off it returns a
// shutdown that does nothing. An unusable setting (an unknown exporter or
// protocol) is an error: the service should not start believing it traces.
func Setup(ctx context.Context, service string, log *slog.Logger) (func(context.Context) error, error) {
	noop := func(context.Context) error { return nil }
	getenv := os.Getenv // the exporters read the process's environment too
	want, err := wanted(getenv)
	if err != nil || !want {
		return noop, err
	}
	exp, err := exporter(ctx, getenv)
	if err != nil {
		return noop, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", service), attribute.String("service.version", buildinfo.Get().Version)))
	if err != nil {
		return noop, fmt.Errorf("tracing resource: %w", err)
	}
	if env, err := resource.New(ctx, resource.WithFromEnv()); err == nil { // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win
		if merged, err := resource.Merge(res, env); err == nil {
			res = merged
		}
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(prop)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing: export failed", "err", err)
	}))
	on.Store(true)
	log.Info("tracing on: spans are exported over OTLP", "service_name", service)
	return func(ctx context.Context) error {
		on.Store(false)
		return tp.Shutdown(ctx)
	}, nil
}

// wanted reads whether the environment turns tracing on.
func wanted(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	switch e := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); e {
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: Braid exports traces over otlp only (or none)", e)
	}
}

// exporter builds the OTLP exporter for the configured protocol.
func exporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp sdktrace.SpanExporter
	var err error
	switch strings.TrimSpace(proto) {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: use http/protobuf or grpc", proto)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing exporter: %w", err)
	}
	return exp, nil
}

// Inject writes the span context of ctx into a record's headers
// (traceparent, and tracestate when there is one). It writes nothing while
// tracing is off or ctx carries no span.
func Inject(ctx context.Context, headers propagation.TextMapCarrier) {
	if !on.Load() || headers == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	prop.Inject(ctx, headers)
}

// Extract returns ctx carrying the remote span context in a record's
// headers, when tracing is on and there is one.
func Extract(ctx context.Context, headers propagation.TextMapCarrier) context.Context {
	if !on.Load() || headers == nil || headers.Get(eventsv1.HeaderTraceparent) == "" {
		return ctx
	}
	return prop.Extract(ctx, headers)
}

// Traceparent is the W3C traceparent of ctx's span ("" when there is none
// or tracing is off), the form the run hash keeps.
func Traceparent(ctx context.Context) string {
	if !on.Load() {
		return ""
	}
	h := propagation.MapCarrier{}
	Inject(ctx, h)
	return h[eventsv1.HeaderTraceparent]
}

// FromTraceparent returns ctx carrying the remote span context of a stored
// traceparent (ctx itself when tp is empty or malformed).
func FromTraceparent(ctx context.Context, tp string) context.Context {
	if !on.Load() || tp == "" {
		return ctx
	}
	return prop.Extract(ctx, propagation.MapCarrier{eventsv1.HeaderTraceparent: tp})
}

// Fail marks span as failed, described by msg (which the caller has
// already cleared of secrets).
func Fail(span trace.Span, msg string) {
	span.SetStatus(codes.Error, msg)
}

// ExtractHTTP returns ctx carrying the span context of an incoming HTTP
// request's traceparent, when tracing is on and it sends one.
func ExtractHTTP(ctx context.Context, h propagation.HeaderCarrier) context.Context {
	if !on.Load() {
		return ctx
	}
	return prop.Extract(ctx, h)
}

// InjectHTTP writes the span context of ctx into outgoing HTTP request
// headers (nothing while tracing is off or ctx carries no span).
func InjectHTTP(ctx context.Context, h propagation.HeaderCarrier) {
	if !on.Load() || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	prop.Inject(ctx, h)
}

// FlushTimeout bounds sending the spans still buffered at exit.
const FlushTimeout = 5 * time.Second

// Stop runs the shutdown Setup returned, bounded by FlushTimeout; a
// failure (the collector is gone) is logged, not returned: exit goes on.
func Stop(shutdown func(context.Context) error, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), FlushTimeout)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		log.Warn("tracing: spans not flushed at exit", "err", err)
	}
}
