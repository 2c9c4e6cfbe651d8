// Command api serves Braid's REST API (SPEC §8). Configuration: BRAID_*
// environment variables (see README.md); it refuses to start without
// BRAID_API_KEYS unless BRAID_AUTH=off.
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
	"github.com/braidhq/braid/services/api/apisvc"
	"github.com/braidhq/braid/services/api/internal/config"
)

func main() {
	env, err := config.Load()
	if len(os.Args) > 1 && os.Args[1] == opsserve.HealthcheckArg { // container health checks
		os.Exit(opsserve.RunHealthcheck(env.Addr, os.Stderr))
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: env.LogLevel}))
	if err != nil {
		logger.Error("api cannot start", logkey.Err, err)
		os.Exit(2)
	}
	keys, err := apisvc.ParseKeys(env.APIKeys)
	if err != nil {
		logger.Error("api cannot start", logkey.Err, err)
		os.Exit(2)
	}
	prof, err := pprofserve.Start(env.PprofAddr, logger)
	if err != nil {
		logger.Error("api cannot start", logkey.Err, err)
		os.Exit(2)
	}
	defer prof.Stop()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, env, keys, logger); err != nil {
		logger.Error("api failed", logkey.Err, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, env config.Config, keys []apisvc.APIKey, logger *slog.Logger) error {
	rdb, err := statestore.NewClient(ctx, env.RedisURL, 10*time.Second, env.RedisCAs)
	if err != nil {
		return err
	}
	defer rdb.Close()
	return apisvc.Run(ctx, apisvc.Config{
		Addr: env.Addr, APIKeys: keys, AuthOff: env.AuthOff,
		Bus:   env.Bus(apisvc.ClientID),
		Redis: rdb, Keys: statestore.Keys{Namespace: env.RedisNamespace},
		MaxBodyBytes: env.MaxBody, MaxWaiters: env.MaxWaiters, Logger: logger,
		RateLimit: float64(offIfZero(env.RateLimit)), RateBurst: env.RateBurst,
		MaxStreamsPerKey: offIfZero(env.MaxStreamsPerKey), MaxWaitersPerKey: offIfZero(env.MaxWaitersPerKey),
		ShellKeys: env.ShellKeys,
	})
}

// offIfZero maps a limit read from BRAID_*, where 0 turns it off, to
// apisvc.Config's convention, where 0 is the default and NoLimit is off.
func offIfZero(n int) int {
	if n == 0 {
		return apisvc.NoLimit
	}
	return n
}
