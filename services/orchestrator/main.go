// Command orchestrator runs Braid's orchestrator: dependency resolution,
// retries, timeouts and run completion. Configuration: BRAID_* environment
// variables (see README.md).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/svcmain"
	"github.com/braidhq/braid/services/orchestrator/internal/config"
	"github.com/braidhq/braid/services/orchestrator/orchsvc"
)

func main() { os.Exit(svcmain.Main("orchestrator", config.Load, run)) }

// run opens the Redis client the orchestrator uses and closes it once the
// orchestrator has stopped: the service's clients belong to its caller.
func run(ctx context.Context, env config.Config, logger *slog.Logger) error {
	rdb, err := statestore.NewClient(ctx, env.RedisURL, svcmain.RedisDialTimeout, env.RedisCAs)
	if err != nil {
		return err
	}
	defer rdb.Close()
	return orchsvc.Run(ctx, env.Service(rdb, logger))
}
