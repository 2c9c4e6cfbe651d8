// Command worker runs a Braid worker with the built-in handlers (noop, shell,
// http, llm, transform, simulate). Configuration: BRAID_* environment
// variables, listed in internal/config.
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/opsserve"
	"github.com/braidhq/braid/pkg/pprofserve"
	"github.com/braidhq/braid/services/worker/internal/config"
	"github.com/braidhq/braid/services/worker/workersvc"
)

func main() {
	env, err := config.Load()
	if len(os.Args) > 1 && os.Args[1] == opsserve.HealthcheckArg { // container health checks
		os.Exit(opsserve.RunHealthcheck(env.HTTPAddr, os.Stderr))
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: env.LogLevel}))
	if err != nil {
		logger.Error("worker cannot start", logkey.Err, err)
		os.Exit(2)
	}
	prof, err := pprofserve.Start(env.PprofAddr, logger)
	if err != nil {
		logger.Error("worker cannot start", logkey.Err, err)
		os.Exit(2)
	}
	defer prof.Stop()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = workersvc.Run(ctx, env.Service(), logger)
	stop()
	if err != nil {
		logger.Error("worker failed", logkey.Err, err)
		os.Exit(1)
	}
}
