// Command worker runs a Braid worker with the built-in handlers (noop, shell,
// http, llm, transform, simulate). Configuration: BRAID_* environment
// variables, listed in internal/config.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/braidhq/braid/pkg/svcmain"
	"github.com/braidhq/braid/services/worker/internal/config"
	"github.com/braidhq/braid/services/worker/workersvc"
	"github.com/redis/go-redis/v9"
)

func main() { os.Exit(svcmain.Main("worker", config.Load, run)) }

// run runs the worker with its Redis client (svcmain.WithRedis).
func run(ctx context.Context, env config.Config, logger *slog.Logger) error {
	return svcmain.WithRedis(ctx, env.RedisURL, env.RedisCAs, func(rdb redis.UniversalClient) error {
		return workersvc.Run(ctx, env.Service(rdb, logger))
	})
}
