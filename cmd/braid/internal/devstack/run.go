package devstack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Run starts the stack described by cfg and blocks until ctx ends (Ctrl-C,
// SIGTERM) or a component fails, then shuts everything down in reverse
// order: api, workers (draining in-flight tasks), orchestrator, Redis
// (SIGTERM by PID), broker. It returns nil after a clean shutdown caused by
// ctx, and the failure otherwise.
func Run(ctx context.Context, cfg Config) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return fmt.Errorf("--data-dir %s: %w", cfg.DataDir, err)
	}
	cfg.DataDir = abs
	unlock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer unlock()
	if !cfg.OnlyInfra {
		if err := checkFree("--addr", cfg.APIAddr); err != nil {
			return err
		}
	}
	inf, err := startInfra(ctx, cfg, os.Stderr)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		inf.stop(sctx)
	}()
	if cfg.OnlyInfra {
		printInfra(cfg.Out, inf)
		return waitInfra(ctx, inf)
	}
	return runServices(ctx, cfg, inf)
}

// waitInfra blocks until ctx ends or Redis exits on its own.
func waitInfra(ctx context.Context, inf *infra) error {
	select {
	case <-ctx.Done():
		return nil
	case <-inf.redis.Exited():
		return errors.New("redis exited unexpectedly; see its log under the data dir")
	}
}

// runServices starts the services on inf, waits for readiness, prints the
// banner and blocks until ctx ends or something fails; then it stops them.
func runServices(ctx context.Context, cfg Config, inf *infra) error {
	keys, err := resolveKeys(cfg)
	if err != nil {
		return err
	}
	st, err := startServices(ctx, cfg, inf, keys.spec)
	if err != nil {
		return err
	}
	readyErr := waitReady(ctx, "http://"+cfg.APIAddr+"/readyz", cfg.ReadyTimeout, st.exits)
	if readyErr == nil {
		printBanner(cfg.Out, cfg, inf, keys)
		readyErr = watch(ctx, st.exits, inf)
	}
	stopErr := st.stop(cfg.ShutdownTimeout, cfg.Logger)
	if ctx.Err() != nil && readyErr != nil && st.failed() == nil {
		readyErr = nil // interrupted while starting: a normal stop
	}
	return errors.Join(readyErr, stopErr)
}

// watch blocks until ctx ends (nil), a service returns, or Redis exits.
func watch(ctx context.Context, exits <-chan exit, inf *infra) error {
	select {
	case <-ctx.Done():
		return nil
	case e := <-exits:
		return fmt.Errorf("%s stopped unexpectedly: %v", e.name, e.err)
	case <-inf.redis.Exited():
		return errors.New("redis exited unexpectedly; see its log under the data dir")
	}
}
