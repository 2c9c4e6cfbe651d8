package devstack

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// sharedRegistry is the one registry of `braid dev`'s services: each
// registers through metrics.Shared (a service label), the Go runtime and
// process collectors once, and the api serves it all at /metrics.
func sharedRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}
