package apisvc

import (
	"net/http"
	"strconv"

	"github.com/braidhq/braid/pkg/tracing"
	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

var apiTracer = tracing.Tracer("api")

// traceRequests gives every request a server span named by its route
// pattern, continuing the caller's traceparent when it sends one. The span
// is the parent of what the request publishes (a run's start, a control):
// POST /workflows/{name}/runs begins the run's trace. Off, it only calls
// the next handler.
func traceRequests(c *gin.Context) {
	if !tracing.Enabled() {
		c.Next()
		return
	}
	ctx := tracing.ExtractHTTP(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
	route := routeLabel(c)
	ctx, span := apiTracer.Start(ctx, c.Request.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", c.Request.Method), attribute.String("http.route", route)))
	defer span.End()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
	status := c.Writer.Status()
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= http.StatusInternalServerError {
		tracing.Fail(span, strconv.Itoa(status))
	}
}

// traceRun names the run a request's span concerns.
func traceRun(c *gin.Context, run, workflow string) {
	if tracing.Enabled() {
		trace.SpanFromContext(c.Request.Context()).SetAttributes(tracing.AttrRunID.String(run), tracing.AttrWorkflow.String(workflow))
	}
}
