package statestore

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewClient connects to the Redis at url (redis://[user:pass@]host:port/db or
// rediss:// for TLS) with ContextTimeoutEnabled so that context deadlines
// bound every command, and checks it answers PING within timeout.
//
// roots, when not nil, are the CAs a rediss:// server's certificate is
// verified against instead of the system's (BRAID_REDIS_TLS_CA_FILE); with
// a redis:// URL they are an error, not silently unused.
func NewClient(ctx context.Context, url string, timeout time.Duration, roots ...*x509.CertPool) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, errors.New("BRAID_REDIS_URL is not a valid redis:// or rediss:// URL (the details are not shown: they could hold the password)")
	}
	opt.ContextTimeoutEnabled = true
	if len(roots) > 0 && roots[0] != nil {
		if opt.TLSConfig == nil {
			return nil, fmt.Errorf("a Redis CA is configured but the URL is not rediss:// (TLS)")
		}
		opt.TLSConfig.RootCAs = roots[0]
	}
	rdb := redis.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("ping redis %s: %w", opt.Addr, err)
	}
	return rdb, nil
}
