// Command worker runs a Braid worker with the built-in handlers (noop, shell,
// http, llm, transform, simulate). Configuration: BRAID_* environment
// variables, listed in internal/config.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/svcmain"
	"github.com/braidhq/braid/services/worker/internal/config"
	"github.com/braidhq/braid/services/worker/workersvc"
)

func main() { os.Exit(svcmain.Main("worker", config.Load, run)) }

// run opens the Redis client the worker uses and closes it once the worker
// has stopped: the service's clients belong to its caller.
func run(ctx context.Context, env config.Config, logger *slog.Logger) error {
	rdb, err := statestore.NewClient(ctx, env.RedisURL, svcmain.RedisDialTimeout, env.RedisCAs)
	if err != nil {
		return err
	}
	defer rdb.Close()
	return workersvc.Run(ctx, env.Service(rdb, logger))
}
