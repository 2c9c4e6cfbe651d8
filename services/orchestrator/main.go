// Command orchestrator runs Braid's orchestrator: dependency resolution,
// retries, timeouts and run completion. Configuration: BRAID_* environment
// variables (see README.md).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/braidhq/braid/pkg/svcmain"
	"github.com/braidhq/braid/services/orchestrator/internal/config"
	"github.com/braidhq/braid/services/orchestrator/orchsvc"
	"github.com/redis/go-redis/v9"
)

func main() { os.Exit(svcmain.Main("orchestrator", config.Load, run)) }

// run runs the orchestrator with its Redis client (svcmain.WithRedis).
func run(ctx context.Context, env config.Config, logger *slog.Logger) error {
	return svcmain.WithRedis(ctx, env.RedisURL, env.RedisCAs, func(rdb redis.UniversalClient) error {
		return orchsvc.Run(ctx, env.Service(rdb, logger))
	})
}
