// Package metrics holds what Braid's three services share for Prometheus:
// a Registry (where a service registers its collectors, and what its
// /metrics serves), constructors that build collectors from the families
// of pkg/metrics/catalog, the go-redis hook timing Redis round trips and
// Lua scripts, the event-bus observer that reports consumer lag and dead
// letters, histogram buckets for millisecond-scale tasks, and Lint, which
// keeps label cardinality bounded.
//
// Hot paths: the collectors a service touches per event are resolved once
// (label children curried at start-up, or cached by label value), so an
// event costs an atomic add or a histogram observation, without allocation.
package metrics
