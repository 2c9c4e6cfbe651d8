// Package config reads the orchestrator's settings from BRAID_* environment
// variables. It is the only place in the service that reads the environment.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/braidhq/braid/pkg/envconf"
	"github.com/braidhq/braid/pkg/svcmain"
	"github.com/braidhq/braid/services/orchestrator/orchsvc"
	"github.com/redis/go-redis/v9"
)

// Config is the orchestrator's environment.
type Config struct {
	envconf.Common
	ID             string        // BRAID_ORCHESTRATOR_ID; default hostname-pid
	LockTTL        time.Duration // BRAID_LOCK_TTL, run lock time to live; default 4s
	ReconcileEvery time.Duration // BRAID_RECONCILE_EVERY, busy-run re-examination period; default 5s
	ReconcileAll   time.Duration // BRAID_RECONCILE_ALL_EVERY, active-run re-examination period; default 12 × ReconcileEvery
	ReconcileRate  int           // BRAID_RECONCILE_RATE, busy runs a pass asks about per second; default 1000
	MetricsAddr    string        // BRAID_ORCHESTRATOR_METRICS_ADDR, where /metrics, /healthz and /readyz listen; default "" (off)
	DrainTimeout   time.Duration // BRAID_ORCHESTRATOR_DRAIN_TIMEOUT, how long SIGTERM lets the batch in hand publish; default 5s
	MaxLost        int           // BRAID_ORCHESTRATOR_MAX_LOST, losses of one attempt before its node fails; default 3
	RunRetention   time.Duration // BRAID_RUN_RETENTION, how long ended runs are kept; default 7d, negative (0 or off) for ever
}

// Load reads the environment, reporting every malformed variable at once.
func Load() (Config, error) {
	r := envconf.New()
	c := Config{
		Common:         r.Common(),
		ID:             r.String("BRAID_ORCHESTRATOR_ID", ""),
		LockTTL:        r.Duration("BRAID_LOCK_TTL", 4*time.Second),
		ReconcileEvery: r.Duration("BRAID_RECONCILE_EVERY", 5*time.Second),
		ReconcileAll:   r.Duration("BRAID_RECONCILE_ALL_EVERY", 0),
		ReconcileRate:  r.PositiveInt("BRAID_RECONCILE_RATE", orchsvc.DefaultReconcileRate),
		MetricsAddr:    r.String("BRAID_ORCHESTRATOR_METRICS_ADDR", ""),
		DrainTimeout:   r.Duration("BRAID_ORCHESTRATOR_DRAIN_TIMEOUT", 5*time.Second),
		MaxLost:        r.PositiveInt("BRAID_ORCHESTRATOR_MAX_LOST", 3),
	}
	var err error
	if c.RunRetention, err = orchsvc.ParseRunRetention(r.String("BRAID_RUN_RETENTION", "")); err != nil {
		err = fmt.Errorf("BRAID_RUN_RETENTION=%w", err)
	}
	return c, errors.Join(r.Err(), err)
}

// MainSettings is what svcmain.Main needs before running the orchestrator.
func (c Config) MainSettings() svcmain.Settings {
	return svcmain.Settings{LogLevel: c.LogLevel, PprofAddr: c.PprofAddr, HealthAddr: c.MetricsAddr}
}

// Service returns the orchsvc configuration these settings describe, with
// the client and logger main made.
func (c Config) Service(rdb redis.UniversalClient, logger *slog.Logger) orchsvc.Config {
	return orchsvc.Config{
		ID:                c.ID,
		StableID:          c.ID != "",
		Bus:               c.Common.Bus("braid-orchestrator"),
		Redis:             rdb,
		Keys:              c.Keys(),
		LockTTL:           c.LockTTL,
		ReconcileEvery:    c.ReconcileEvery,
		ReconcileAllEvery: c.ReconcileAll,
		ReconcileRate:     c.ReconcileRate,
		MetricsAddr:       c.MetricsAddr,
		DrainTimeout:      c.DrainTimeout,
		MaxLost:           c.MaxLost,
		RunRetention:      c.RunRetention,
		Logger:            logger,
	}
}
