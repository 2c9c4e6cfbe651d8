package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/metrics/catalog"
	"github.com/prometheus/client_golang/prometheus"
)

// NewBusObserver registers braid_consumer_lag and braid_dlq_records_total
// on r and returns the eventbus.Observer that feeds them: set it as
// eventbus.Config.Observer of the service's consumers and producers.
//
// The lag of a partition is what the consumer saw when Fetch last returned
// one of its records: the records the broker held beyond it. It is not
// refreshed while the consumer fetches nothing from the partition, so a
// stalled consumer shows its last value, and a member keeps the last value
// of a partition a rebalance took from it (dashboards take the max per
// topic and partition, as the new owner's value is current).
func NewBusObserver(r prometheus.Registerer) (eventbus.Observer, error) {
	lag, err := register(r, &lagCollector{
		desc: prometheus.NewDesc(catalog.ConsumerLag.Name, catalog.ConsumerLag.Help, catalog.ConsumerLag.Labels, nil),
		m:    map[partition]*atomic.Int64{},
	})
	if err != nil {
		return nil, err
	}
	dlq, err := NewCounterVec(r, catalog.DLQRecords)
	if err != nil {
		return nil, err
	}
	return &busObserver{lag: lag, dlq: dlq}, nil
}

// busObserver implements eventbus.Observer.
type busObserver struct {
	lag *lagCollector
	dlq *prometheus.CounterVec
}

// Lag records a partition's lag.
func (o *busObserver) Lag(topic string, p int, lag int64) { o.lag.set(partition{topic, p}, lag) }

// DeadLettered counts n dead letters of topic.
func (o *busObserver) DeadLettered(topic string, n int) { o.dlq.WithLabelValues(topic).Add(float64(n)) }

// partition is one partition of a logical topic.
type partition struct {
	topic string
	n     int
}

// lagCollector is braid_consumer_lag: the last lag seen per partition.
// set takes a read lock and an atomic store once the partition is known.
type lagCollector struct {
	desc *prometheus.Desc
	mu   sync.RWMutex
	m    map[partition]*atomic.Int64
}

func (c *lagCollector) set(p partition, lag int64) {
	c.mu.RLock()
	v, ok := c.m[p]
	c.mu.RUnlock()
	if !ok {
		c.mu.Lock()
		if v, ok = c.m[p]; !ok {
			v = &atomic.Int64{}
			c.m[p] = v
		}
		c.mu.Unlock()
	}
	v.Store(lag)
}

// Describe implements prometheus.Collector.
func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for p, v := range c.m {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(v.Load()), p.topic, strconv.Itoa(p.n))
	}
}
