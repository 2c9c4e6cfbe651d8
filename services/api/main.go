// Command api serves Braid's REST API (SPEC §8). Configuration: BRAID_*
// environment variables (see README.md); it refuses to start without
// BRAID_API_KEYS unless BRAID_AUTH=off.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/braidhq/braid/pkg/svcmain"
	"github.com/braidhq/braid/services/api/apisvc"
	"github.com/braidhq/braid/services/api/internal/config"
	"github.com/redis/go-redis/v9"
)

func main() { os.Exit(svcmain.Main("api", config.Load, run)) }

// run opens the Redis client the api uses and closes it once the api has
// stopped: the service's clients belong to its caller (DESIGN.md).
func run(ctx context.Context, env config.Config, logger *slog.Logger) error {
	cfg, err := env.Service(nil, logger) // the keys first: a bad one is a config error even with Redis down
	if err != nil {
		return svcmain.BadConfig(err)
	}
	return svcmain.WithRedis(ctx, env.RedisURL, env.RedisCAs, func(rdb redis.UniversalClient) error {
		cfg.Redis = rdb
		return apisvc.Run(ctx, cfg)
	})
}
