package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/braidhq/braid/pkg/testkit/otlpsink"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestWantedFollowsTheOTELVariables(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
		err  bool
	}{
		{env: nil, want: false},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, want: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, want: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: false},
		{env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, want: false},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: true},
	} {
		got, err := wanted(env(c.env))
		if c.err {
			require.Error(t, err, "%v", c.env)
			continue
		}
		require.NoError(t, err, "%v", c.env)
		require.Equal(t, c.want, got, "%v", c.env)
	}
}

func TestSetupRefusesAnUnknownProtocol(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	_, err := Setup(context.Background(), "t", slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "http/json")
	require.False(t, Enabled())
}

// TestOffCostsNothing: without Setup nothing is injected, extracted or
// wrapped.
func TestOffCostsNothing(t *testing.T) {
	require.False(t, Enabled())
	h := propagation.MapCarrier{}
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled}))
	Inject(ctx, h)
	require.Empty(t, h)
	require.Empty(t, Traceparent(ctx))
	got := Extract(context.Background(), propagation.MapCarrier{eventsv1.HeaderTraceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
	require.False(t, trace.SpanContextFromContext(got).IsValid())
	base := slog.NewJSONHandler(&bytes.Buffer{}, nil)
	require.Equal(t, slog.Handler(base), LogHandler(base))
}

// TestSpansCrossARecordAndReachTheCollector: a span's context written into
// a record's headers is continued on the other side, the spans arrive over
// OTLP/HTTP with the service's name, and log lines carry the trace ids.
func TestSpansCrossARecordAndReachTheCollector(t *testing.T) {
	sink := otlpsink.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	shutdown, err := Setup(context.Background(), "braid-test", slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.True(t, Enabled())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			Stop(shutdown, slog.New(slog.DiscardHandler))
		}
	})

	ctx, producer := Tracer("api").Start(context.Background(), "produce")
	headers := propagation.MapCarrier{}
	Inject(ctx, headers)
	require.Contains(t, headers, eventsv1.HeaderTraceparent)
	require.Equal(t, headers[eventsv1.HeaderTraceparent], Traceparent(ctx))

	var logged bytes.Buffer
	log := slog.New(LogHandler(slog.NewJSONHandler(&logged, nil)))
	cctx, consumer := Tracer("worker").Start(Extract(context.Background(), headers), "consume")
	log.InfoContext(cctx, "handled")
	consumer.End()
	_, later := Tracer("orchestrator").Start(FromTraceparent(context.Background(), headers[eventsv1.HeaderTraceparent]), "timer")
	later.End()
	producer.End()

	Stop(shutdown, slog.New(slog.DiscardHandler))
	stopped = true
	require.False(t, Enabled())

	spans := sink.Spans()
	require.Len(t, spans, 3)
	by := map[string]otlpsink.Span{}
	for _, s := range spans {
		by[s.Name] = s
		require.Equal(t, "braid-test", s.Service)
	}
	p := by["produce"]
	require.Equal(t, Scope+"/api", p.Scope)
	for _, child := range []string{"consume", "timer"} {
		require.Equal(t, p.TraceID, by[child].TraceID, child)
		require.Equal(t, p.SpanID, by[child].ParentID, child)
	}
	var line map[string]any
	require.NoError(t, json.Unmarshal(logged.Bytes(), &line))
	require.Equal(t, p.TraceID, line[LogTraceID])
	require.Equal(t, by["consume"].SpanID, line[LogSpanID])
}
