package statestore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// ReindexThen is Reindex with after called between its phases ("copied",
// "cleaned"); an error from after stops it there, as a crash would.
func (k Keys) ReindexThen(ctx context.Context, rdb redis.UniversalClient, to int, after func(phase string) error) (ReindexStats, error) {
	return k.reindex(ctx, rdb, to, nil, after)
}
