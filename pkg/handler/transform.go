package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/braidhq/braid/pkg/worker"
	"github.com/itchyny/gojq"
)

// maxJQResults bounds how many values one jq program may emit.
const maxJQResults = 1_000_000

// transformHandler runs a jq expression (github.com/itchyny/gojq) over input.
type transformHandler struct{ cache *jqCache }

// Handle returns the jq result: one value as is, several as an array, none as
// null. Without "jq" it returns "input" when present, else the whole config.
// The program sees no environment ($ENV is empty) and no files.
func (h *transformHandler) Handle(ctx context.Context, task *worker.Task) (any, error) {
	o, err := parseObject(task.Config)
	if err != nil || !o.has("jq") {
		return passThrough(o, task.Config)
	}
	var expr string
	if err := o.get("jq", &expr); err != nil {
		return nil, configError("transform", err)
	}
	code, err := h.cache.compile(expr)
	if err != nil {
		return nil, configError("transform", err)
	}
	input, err := decodeAny(o["input"])
	if err != nil {
		return nil, configError("transform", fmt.Errorf("config field %q: %w", "input", err))
	}
	return runJQ(ctx, code, input)
}

// passThrough is the output without a jq expression: config "input" when the
// key is present, else the whole config (any JSON value).
func passThrough(o object, config json.RawMessage) (any, error) {
	if raw, ok := o["input"]; ok {
		return json.RawMessage(raw), nil
	}
	if isNull(config) {
		return nil, nil
	}
	return json.RawMessage(config), nil
}

// runJQ collects the program's results and encodes them jq-style (NaN → null).
func runJQ(ctx context.Context, code *gojq.Code, input any) (any, error) {
	start := time.Now()
	var results []any
	iter := code.RunWithContext(ctx, input)
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := v.(error); isErr {
			return nil, jqError(ctx, start, err)
		}
		if len(results) == maxJQResults {
			return nil, worker.Permanent(fmt.Errorf("transform: jq emitted more than %d results", maxJQResults))
		}
		results = append(results, v)
	}
	var out any
	switch len(results) {
	case 0:
		return nil, nil
	case 1:
		out = results[0]
	default:
		out = results
	}
	b, err := gojq.Marshal(out)
	if err != nil {
		return nil, worker.Permanent(fmt.Errorf("transform: encode result: %w", err))
	}
	return json.RawMessage(b), nil
}

// jqError classifies a run-time error: ctx ending is retryable, anything the
// program raised (deterministic for the same input) is permanent.
func jqError(ctx context.Context, start time.Time, err error) error {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ctxError(ctx, "transform", start)
	}
	return worker.Permanent(fmt.Errorf("transform: jq: %w", err))
}
