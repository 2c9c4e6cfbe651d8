package handler

import (
	"net/http"
	"strconv"

	"github.com/braidhq/braid/pkg/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

var handlerTracer = tracing.Tracer("handler")

// tracedTransport makes each request the http and llm handlers send (every
// redirect hop included) a client span under the attempt's execute span,
// and sends its traceparent to the service called. The span carries the
// method, host, port and status code — never the path or query, which may
// hold a secret — and ends when the response headers arrive. While tracing
// is off it only forwards the request.
type tracedTransport struct{ next http.RoundTripper }

func (t tracedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !tracing.Enabled() {
		return t.next.RoundTrip(req)
	}
	ctx, sp := handlerTracer.Start(req.Context(), "HTTP "+req.Method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", req.Method),
			attribute.String("server.address", req.URL.Hostname()), attribute.String("url.scheme", req.URL.Scheme)))
	defer sp.End()
	if p := req.URL.Port(); p != "" {
		if n, err := strconv.Atoi(p); err == nil {
			sp.SetAttributes(attribute.Int("server.port", n))
		}
	}
	req = req.Clone(ctx) // a RoundTripper must not change the caller's request
	tracing.InjectHTTP(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		tracing.Fail(sp, "request failed") // the error names the URL, which may hold a secret
		return resp, err
	}
	sp.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= http.StatusInternalServerError {
		tracing.Fail(sp, strconv.Itoa(resp.StatusCode))
	}
	return resp, nil
}
