package statestore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// IdempotencyTTL is how long an Idempotency-Key of a run request is remembered.
const IdempotencyTTL = 24 * time.Hour

// reserveScript stores a value unless one is there, and returns what is stored.
//
//	KEYS[1] idempotency key  ARGV[1] value  ARGV[2] ttl ms
//	returns {1, value} when stored now, {0, stored value} when it was there
var reserveScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1, ARGV[1]} end
return {0, redis.call('GET', KEYS[1])}
`)

// ReserveIdempotency stores value under the Idempotency-Key key of workflow
// for ttl unless a value is already there. It returns the stored value and
// whether it is the one just stored (fresh).
func (k Keys) ReserveIdempotency(ctx context.Context, rdb redis.Scripter, workflow, key, value string, ttl time.Duration) (stored string, fresh bool, err error) {
	res, err := reserveScript.Run(ctx, rdb, []string{k.Idempotency(workflow, key)}, value, max(ttl.Milliseconds(), 1)).Slice()
	if err != nil {
		return "", false, fmt.Errorf("reserve idempotency key workflow=%s: %w", workflow, err)
	}
	if len(res) != 2 {
		return "", false, fmt.Errorf("reserve idempotency key workflow=%s: unexpected reply %v", workflow, res)
	}
	n, _ := res[0].(int64)
	s, _ := res[1].(string)
	return s, n == 1, nil
}

// ReleaseIdempotency forgets the Idempotency-Key key of workflow if it still
// holds value (the request it reserved for failed), so a retry can succeed.
func (k Keys) ReleaseIdempotency(ctx context.Context, rdb redis.Scripter, workflow, key, value string) error {
	if err := releaseScript.Run(ctx, rdb, []string{k.Idempotency(workflow, key)}, value).Err(); err != nil {
		return fmt.Errorf("release idempotency key workflow=%s: %w", workflow, err)
	}
	return nil
}
