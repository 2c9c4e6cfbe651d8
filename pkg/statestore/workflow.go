package statestore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotFound is returned when a workflow, version or run does not exist.
var ErrNotFound = errors.New("not found")

// registerScript stores a new version of a workflow.
//
//	KEYS[1] meta hash  KEYS[2] versions hash
//	ARGV[1] definition JSON  ARGV[2] now (ms)
//	returns the new version number
var registerScript = redis.NewScript(`
local v = redis.call('HINCRBY', KEYS[1], 'latest', 1)
redis.call('HSET', KEYS[2], v, ARGV[1])
redis.call('HSETNX', KEYS[1], 'created', ARGV[2])
redis.call('HSET', KEYS[1], 'updated', ARGV[2])
return v
`)

// PutWorkflow stores def (normalised definition JSON) as the next version of
// workflow name and returns its version number (1 for a new name).
func (k Keys) PutWorkflow(ctx context.Context, rdb redis.Cmdable, name string, def []byte, now time.Time) (int, error) {
	v, err := registerScript.Run(ctx, rdb, []string{k.WorkflowMeta(name), k.WorkflowVersions(name)}, def, now.UnixMilli()).Int()
	if err != nil {
		return 0, fmt.Errorf("register workflow %s: %w", name, err)
	}
	if err := rdb.ZAddNX(ctx, k.Workflows(), redis.Z{Score: float64(now.UnixMilli()), Member: name}).Err(); err != nil {
		return 0, fmt.Errorf("index workflow %s: %w", name, err)
	}
	return v, nil
}

// GetWorkflow returns version v of workflow name (v ≤ 0: the latest) and the version number.
func (k Keys) GetWorkflow(ctx context.Context, rdb redis.Cmdable, name string, v int) ([]byte, int, error) {
	if v <= 0 {
		latest, err := rdb.HGet(ctx, k.WorkflowMeta(name), "latest").Int()
		if errors.Is(err, redis.Nil) {
			return nil, 0, fmt.Errorf("workflow %s: %w", name, ErrNotFound)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("workflow %s latest version: %w", name, err)
		}
		v = latest
	}
	def, err := rdb.HGet(ctx, k.WorkflowVersions(name), strconv.Itoa(v)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, 0, fmt.Errorf("workflow %s version %d: %w", name, v, ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("workflow %s version %d: %w", name, v, err)
	}
	return def, v, nil
}
