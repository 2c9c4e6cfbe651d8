package statestore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Layout is the hash recording the data layout of a namespace: field
// index_shards, the Keys.Shards the indexes were first written with.
func (k Keys) Layout() string { return k.base() + "layout" }

// layoutShards is Layout's field holding the index shard count.
const layoutShards = "index_shards"

// ErrLayout says a service's Keys.Shards differs from the one the
// namespace's indexes were written with: it would list and reconcile only
// the runs its own layout puts where it looks.
var ErrLayout = errors.New("index layout mismatch")

// CheckLayout records k.Shards as the namespace's index shard count if none
// is recorded yet (the first service to start decides), and returns an
// error wrapping ErrLayout if a different count is recorded or a re-index
// (Reindex) has not finished. One round trip.
func (k Keys) CheckLayout(ctx context.Context, rdb redis.Cmdable) error {
	want := strconv.Itoa(k.shards())
	pipe := rdb.Pipeline()
	pipe.HSetNX(ctx, k.Layout(), layoutShards, want)
	got := pipe.HGet(ctx, k.Layout(), layoutShards)
	moving := pipe.HGet(ctx, k.Layout(), layoutReindexTo)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("check index layout %s: %w", k.Layout(), err)
	}
	if to := moving.Val(); to != "" {
		return fmt.Errorf("the run indexes are being moved from %s to %s shards (%s field %s): %w; finish with `braid admin reindex --shards %s`, then start with BRAID_REDIS_INDEX_SHARDS=%s",
			got.Val(), to, k.Layout(), layoutReindexTo, ErrLayout, to, to)
	}
	if got.Val() != want {
		return fmt.Errorf("BRAID_REDIS_INDEX_SHARDS is %s but this Redis keeps its run indexes in %s shards (%s): %w; set it to %s",
			want, got.Val(), k.Layout(), ErrLayout, got.Val())
	}
	return nil
}
