package workersvc

import "github.com/braidhq/braid/pkg/metrics"

// instrument defaults cfg.Metrics to a fresh registry, adds the Redis hook
// to cfg.Redis and sets the bus observer (consumer lag, dead letters); the
// attempt metrics are pkg/worker's.
func instrument(cfg Config) (Config, error) {
	cfg.Metrics = cfg.Metrics.OrNew()
	if err := metrics.InstrumentRedis(cfg.Redis, cfg.Metrics.Registerer); err != nil {
		return cfg, err
	}
	obs, err := metrics.NewBusObserver(cfg.Metrics.Registerer)
	cfg.Bus.Observer = obs
	return cfg, err
}
