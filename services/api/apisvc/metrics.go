package apisvc

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the api's Prometheus collectors.
type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	runsCreated prometheus.Counter
	sseClients  prometheus.Gauge
	waiting     prometheus.Gauge
	limited     *prometheus.CounterVec
}

// newMetrics registers the api's collectors on reg (a fresh registry with
// the Go and process collectors when nil).
func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := &metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "braid_http_requests_total", Help: "HTTP requests served, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "braid_http_request_duration_seconds", Help: "HTTP request latency, by route pattern and method.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
		runsCreated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "braid_runs_created_total", Help: "Runs accepted by POST /workflows/{name}/runs (idempotent replays excluded).",
		}),
		sseClients: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "braid_sse_clients", Help: "Open server-sent event streams (run events and followed logs).",
		}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "braid_api_waiting_requests", Help: "Requests waiting for a run to end (?wait= on POST /workflows/{name}/runs and GET /runs/{id}).",
		}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "braid_api_limited_total", Help: "Requests refused with a 429, by the limit they hit: rate (per-client requests/s), streams or waiters (per client at once).",
		}, []string{"limit"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.runsCreated, m.sseClients, m.waiting, m.limited} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observe counts and times every request by its route pattern (never the raw
// path, so label cardinality stays bounded).
func (m *metrics) observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := routeLabel(c)
	method := methodLabel(c.Request.Method)
	m.requests.WithLabelValues(route, method, strconv.Itoa(c.Writer.Status())).Inc()
	m.duration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
}

// methodLabel bounds the method label: any method outside the standard set is "other".
func methodLabel(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return m
	}
	return "other"
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() gin.HandlerFunc {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return gin.WrapH(h)
}
