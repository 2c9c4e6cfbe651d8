package apisvc

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/metrics"
	"github.com/braidhq/braid/pkg/metrics/catalog"
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// apiMetrics are the api's Prometheus collectors.
type apiMetrics struct {
	gatherer    prometheus.Gatherer
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	runsCreated prometheus.Counter
	sseClients  prometheus.Gauge
	waiting     prometheus.Gauge
	limited     *prometheus.CounterVec
}

// newMetrics registers the api's collectors on cfg.Metrics (defaulted),
// adds the Redis hook to cfg.Redis and sets cfg.Bus.Observer (consumer
// lag of the events feed).
func newMetrics(cfg *Config) (*apiMetrics, error) {
	r := cfg.Metrics.Registerer
	m := &apiMetrics{gatherer: cfg.Metrics.Gatherer}
	var errs [8]error
	m.requests, errs[0] = metrics.NewCounterVec(r, catalog.HTTPRequests)
	m.duration, errs[1] = metrics.NewHistogramVec(r, catalog.HTTPRequestDuration, prometheus.DefBuckets)
	m.runsCreated, errs[2] = metrics.NewCounter(r, catalog.RunsCreated)
	m.sseClients, errs[3] = metrics.NewGauge(r, catalog.SSEClients)
	m.waiting, errs[4] = metrics.NewGauge(r, catalog.APIWaiting)
	m.limited, errs[5] = metrics.NewCounterVec(r, catalog.APILimited)
	errs[6] = metrics.InstrumentRedis(cfg.Redis, r)
	cfg.Bus.Observer, errs[7] = metrics.NewBusObserver(r)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("api metrics: %w", err)
	}
	return m, nil
}

// observe counts and times every request by its route pattern (never the raw
// path, so label cardinality stays bounded).
func (m *apiMetrics) observe(c *gin.Context) {
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
func (m *apiMetrics) handler() gin.HandlerFunc {
	h := promhttp.HandlerFor(m.gatherer, promhttp.HandlerOpts{})
	return gin.WrapH(h)
}
