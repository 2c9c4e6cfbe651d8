package statestore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// MaxPage bounds the members one PageSorted call returns.
const MaxPage = 1000

// pageScript returns one page of a sorted set after a cursor member.
//
//	KEYS[1] sorted set
//	ARGV[1] cursor member ("" = from the start)  ARGV[2] cursor score
//	ARGV[3] limit  ARGV[4] "1" for highest score first, else lowest first
//	returns a flat list member, score, member, score, ...
//
// When the cursor member is still in the set the page starts right after its
// rank, read in the same step, so members added or removed elsewhere never
// make a page skip or repeat one. When it is gone (or was re-scored) the page
// continues from the cursor score, exclusive.
var pageScript = redis.NewScript(`
local key, member, limit, desc = KEYS[1], ARGV[1], tonumber(ARGV[3]), ARGV[4] == '1'
local start = 0
if member ~= '' then
  local score = redis.call('ZSCORE', key, member)
  if score and tonumber(score) == tonumber(ARGV[2]) then
    if desc then start = redis.call('ZREVRANK', key, member) + 1
    else start = redis.call('ZRANK', key, member) + 1 end
  elseif desc then
    return redis.call('ZREVRANGEBYSCORE', key, '(' .. ARGV[2], '-inf', 'WITHSCORES', 'LIMIT', 0, limit)
  else
    return redis.call('ZRANGEBYSCORE', key, '(' .. ARGV[2], '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
  end
end
if desc then return redis.call('ZREVRANGE', key, start, start + limit - 1, 'WITHSCORES') end
return redis.call('ZRANGE', key, start, start + limit - 1, 'WITHSCORES')
`)

// PageSorted returns up to limit (1..MaxPage) members of the sorted set key
// that come after the cursor member after (nil: from the start), highest
// score first when desc, with their scores. A short page means the end.
func PageSorted(ctx context.Context, rdb redis.Scripter, key string, after *redis.Z, limit int, desc bool) ([]redis.Z, error) {
	if limit < 1 || limit > MaxPage {
		return nil, fmt.Errorf("page %s: limit %d outside 1..%d", key, limit, MaxPage)
	}
	member, score := "", "0"
	if after != nil {
		m, ok := after.Member.(string)
		if !ok || m == "" {
			return nil, fmt.Errorf("page %s: cursor member must be a non-empty string", key)
		}
		member, score = m, strconv.FormatFloat(after.Score, 'f', -1, 64)
	}
	res, err := pageScript.Run(ctx, rdb, []string{key}, member, score, limit, boolArg(desc)).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("page %s: %w", key, err)
	}
	out := make([]redis.Z, 0, len(res)/2)
	for i := 0; i+1 < len(res); i += 2 {
		s, err := strconv.ParseFloat(res[i+1], 64)
		if err != nil {
			return nil, fmt.Errorf("page %s: score %q of %s: %w", key, res[i+1], res[i], err)
		}
		out = append(out, redis.Z{Member: res[i], Score: s})
	}
	return out, nil
}
