// Command orchestrator runs Braid's orchestrator: dependency resolution,
// retries, timeouts and run completion. Configuration: BRAID_* environment
// variables (see README.md).
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/opsserve"
	"github.com/braidhq/braid/pkg/pprofserve"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/internal/config"
	"github.com/braidhq/braid/services/orchestrator/orchsvc"
)

func main() {
	env, err := config.Load()
	if len(os.Args) > 1 && os.Args[1] == opsserve.HealthcheckArg { // container health checks
		os.Exit(opsserve.RunHealthcheck(env.MetricsAddr, os.Stderr))
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: env.LogLevel}))
	if err != nil {
		logger.Error("orchestrator cannot start", logkey.Err, err)
		os.Exit(2)
	}
	prof, err := pprofserve.Start(env.PprofAddr, logger)
	if err != nil {
		logger.Error("orchestrator cannot start", logkey.Err, err)
		os.Exit(2)
	}
	defer prof.Stop()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, env, logger); err != nil {
		logger.Error("orchestrator failed", logkey.Err, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, env config.Config, logger *slog.Logger) error {
	rdb, err := statestore.NewClient(ctx, env.RedisURL, 10*time.Second, env.RedisCAs)
	if err != nil {
		return err
	}
	defer rdb.Close()
	cfg := env.Service(rdb)
	cfg.Logger = logger
	return orchsvc.Run(ctx, cfg)
}
