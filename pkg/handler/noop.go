package handler

import (
	"context"
	"fmt"

	"github.com/braidhq/braid/pkg/worker"
)

// handleNoop echoes the task's config as its output (null config → null).
func handleNoop(_ context.Context, task *worker.Task) (any, error) {
	v, err := decodeAny(task.Config)
	if err != nil {
		return nil, worker.Permanent(fmt.Errorf("noop: invalid config: %w", err))
	}
	return v, nil
}
