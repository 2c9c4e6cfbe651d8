package statestore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewClient connects to the Redis at url (redis://[user:pass@]host:port/db or
// rediss:// for TLS) with ContextTimeoutEnabled so that context deadlines
// bound every command, and checks it answers PING within timeout.
func NewClient(ctx context.Context, url string, timeout time.Duration) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", err)
	}
	opt.ContextTimeoutEnabled = true
	rdb := redis.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("ping redis %s: %w", opt.Addr, err)
	}
	return rdb, nil
}
