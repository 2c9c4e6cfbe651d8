package tracing

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Log keys of the trace ids a line carries.
const (
	LogTraceID = "trace_id"
	LogSpanID  = "span_id"
)

// LogHandler wraps h so that a line logged with a context holding a span
// (logger.InfoContext(ctx, …)) carries its trace_id and span_id beside
// run_id and node_id: a log search finds the trace, and the trace the
// lines. Wrap only when tracing is on; off, h is returned as it is.
func LogHandler(h slog.Handler) slog.Handler {
	if !Enabled() {
		return h
	}
	return logHandler{h}
}

type logHandler struct{ slog.Handler }

func (l logHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String(LogTraceID, sc.TraceID().String()), slog.String(LogSpanID, sc.SpanID().String()))
	}
	return l.Handler.Handle(ctx, r)
}

func (l logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return logHandler{l.Handler.WithAttrs(as)}
}

func (l logHandler) WithGroup(name string) slog.Handler {
	return logHandler{l.Handler.WithGroup(name)}
}
