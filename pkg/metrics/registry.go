package metrics

import (
	"errors"
	"fmt"

	"github.com/braidhq/braid/pkg/metrics/catalog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Registry is where a service registers its collectors (Registerer) and
// what its /metrics serves (Gatherer). The zero value means "a fresh
// registry of its own" (OrNew). `braid dev` gives its three services one
// shared registry, each through prometheus.WrapRegistererWith a service
// label, and serves it at the api's /metrics.
type Registry struct {
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
}

// New returns a fresh registry with the Go runtime and process collectors.
func New() Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return Registry{Registerer: reg, Gatherer: reg}
}

// OrNew returns r, or New() when r is the zero Registry. A Registry with
// only one of its two halves set is a programming error: it panics.
func (r Registry) OrNew() Registry {
	switch {
	case r.Registerer == nil && r.Gatherer == nil:
		return New()
	case r.Registerer == nil || r.Gatherer == nil:
		panic("metrics.Registry: set both Registerer and Gatherer, or neither")
	}
	return r
}

// Shared returns the registry a service of name serves from one shared
// registry: its collectors get the label service=name, and its Gatherer is
// the shared one.
func Shared(reg *prometheus.Registry, name string) Registry {
	return Registry{Registerer: prometheus.WrapRegistererWith(prometheus.Labels{"service": name}, reg), Gatherer: reg}
}

// register registers c on r, or returns the collector already registered
// with the same description (two workers of `braid dev` in one registry
// share their collectors, so their counts add up).
func register[C prometheus.Collector](r prometheus.Registerer, c C) (C, error) {
	err := r.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("register metrics: %w", err)
}

// mustType panics when f is not of type t: a programming error in the
// caller, which asked for the wrong constructor.
func mustType(f catalog.Family, t catalog.Type) {
	if f.Type != t {
		panic(fmt.Sprintf("metrics: %s is a %s, not a %s", f.Name, f.Type, t))
	}
}

// NewCounterVec registers f's counter (with f's labels) on r.
func NewCounterVec(r prometheus.Registerer, f catalog.Family) (*prometheus.CounterVec, error) {
	mustType(f, catalog.Counter)
	return register(r, prometheus.NewCounterVec(prometheus.CounterOpts{Name: f.Name, Help: f.Help}, f.Labels))
}

// NewCounter registers f's counter, which has no labels, on r.
func NewCounter(r prometheus.Registerer, f catalog.Family) (prometheus.Counter, error) {
	mustType(f, catalog.Counter)
	return register(r, prometheus.NewCounter(prometheus.CounterOpts{Name: f.Name, Help: f.Help}))
}

// NewCounterFunc registers f's counter, which has no labels, reading fn on
// every scrape.
func NewCounterFunc(r prometheus.Registerer, f catalog.Family, fn func() float64) (prometheus.CounterFunc, error) {
	mustType(f, catalog.Counter)
	return register(r, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: f.Name, Help: f.Help}, fn))
}

// NewGaugeVec registers f's gauge (with f's labels, possibly none) on r.
func NewGaugeVec(r prometheus.Registerer, f catalog.Family) (*prometheus.GaugeVec, error) {
	mustType(f, catalog.Gauge)
	return register(r, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: f.Name, Help: f.Help}, f.Labels))
}

// NewGauge registers f's gauge, which has no labels, on r.
func NewGauge(r prometheus.Registerer, f catalog.Family) (prometheus.Gauge, error) {
	mustType(f, catalog.Gauge)
	return register(r, prometheus.NewGauge(prometheus.GaugeOpts{Name: f.Name, Help: f.Help}))
}

// NewHistogramVec registers f's histogram with buckets on r.
func NewHistogramVec(r prometheus.Registerer, f catalog.Family, buckets []float64) (*prometheus.HistogramVec, error) {
	mustType(f, catalog.Histogram)
	return register(r, prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: f.Name, Help: f.Help, Buckets: buckets}, f.Labels))
}
