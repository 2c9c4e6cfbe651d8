package handler

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/braidhq/braid/pkg/worker"
)

// simulateConfig is the simulate handler's node config (seed 002's simulated
// task). Other keys (action, max_retries, ...) are allowed and ignored.
type simulateConfig struct {
	Duration        duration        // "duration" or seed 002's "duration_seconds": "2s" or seconds
	FailProbability float64         // chance in [0, 1] that an attempt fails
	Output          json.RawMessage // returned as is on success, when present
	Action          json.RawMessage // echoed in the default output
}

func decodeSimulateConfig(raw []byte) (simulateConfig, error) {
	o, err := parseObject(raw)
	if err != nil {
		return simulateConfig{}, err
	}
	var c simulateConfig
	durationKey := "duration"
	if !o.has(durationKey) {
		durationKey = "duration_seconds"
	}
	err = o.getAll(field{durationKey, &c.Duration}, field{"fail_probability", &c.FailProbability})
	if err != nil {
		return simulateConfig{}, err
	}
	c.Output, c.Action = o["output"], o["action"]
	if p := c.FailProbability; math.IsNaN(p) || p < 0 || p > 1 {
		return simulateConfig{}, fmt.Errorf("config field %q: want 0..1, got %g", "fail_probability", p)
	}
	return c, nil
}

// handleSimulate sleeps for the configured duration, then fails with
// fail_probability. The draw comes from a source seeded with the task's
// idempotency key, so an attempt's outcome is reproducible while successive
// attempts (which have different keys) draw independently.
func handleSimulate(ctx context.Context, task *worker.Task) (any, error) {
	c, err := decodeSimulateConfig(task.Config)
	if err != nil {
		return nil, configError("simulate", err)
	}
	start := time.Now()
	if err := clock.Sleep(ctx, time.Duration(c.Duration)); err != nil {
		return nil, ctxError(ctx, "simulate", start)
	}
	if simulatedFailure(task.IdempotencyKey, c.FailProbability) {
		return nil, fmt.Errorf("simulated failure (p=%g)", c.FailProbability)
	}
	if !isNull(c.Output) {
		return c.Output, nil
	}
	return simulateOutput(task, c), nil
}

// simulatedFailure draws once from a source seeded by FNV-64a(key).
func simulatedFailure(key string, p float64) bool {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	seed := h.Sum64()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return r.Float64() < p
}

// simulateOutput is the default success output.
func simulateOutput(task *worker.Task, c simulateConfig) map[string]any {
	out := map[string]any{
		"ok":          true,
		"attempt":     task.Attempt,
		"duration_ms": time.Duration(c.Duration).Milliseconds(),
	}
	if c.Action != nil {
		out["action"] = c.Action
	}
	return out
}
