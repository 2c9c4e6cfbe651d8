package handler

import (
	"context"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/braidhq/braid/pkg/worker"
)

// httpMock answers without network after c.MockDelay: status 200, no
// headers, and a body echoing the request. Top-level "result" is a short
// text so seed-style templates such as << fetch.result >> resolve.
func httpMock(ctx context.Context, task *worker.Task, c httpConfig) (any, error) {
	start := time.Now()
	if err := clock.Sleep(ctx, time.Duration(c.MockDelay)); err != nil {
		return nil, ctxError(ctx, "http mock", start)
	}
	echo, err := decodeAny(c.Body)
	if err != nil {
		return nil, configError("http", err)
	}
	return map[string]any{
		"status":  200,
		"headers": map[string]string{},
		"body": map[string]any{
			"mock":            true,
			"method":          c.Method,
			"url":             c.URL,
			"echo":            echo,
			"idempotency_key": task.IdempotencyKey,
		},
		"result": strings.TrimSpace("mock response to " + c.Method + " " + c.URL),
	}, nil
}
