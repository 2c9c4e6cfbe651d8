package statestore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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

// pageRounds bounds the reads of one shard per PageShards call; fetchSlack
// is how many members beyond the page each read asks for (members tied
// with the cursor's score that come before it are read and skipped).
const (
	pageRounds = 8
	fetchSlack = 16
)

// PageShards is PageSorted, highest score first, over the shards of one
// index (Keys.AllRunShards and the like): the page holds the first limit
// members, across every shard, that come strictly after the cursor after
// in (score, member) order — the order Redis keeps within one set — so
// members created in the same millisecond on different shards are neither
// skipped nor repeated. Each shard is read in one pipeline per round (one
// round when no shard holds many members tied with the cursor). With one
// shard it is PageSorted.
func PageShards(ctx context.Context, rdb redis.Cmdable, keys []string, after *redis.Z, limit int) ([]redis.Z, error) {
	if len(keys) == 1 {
		return PageSorted(ctx, rdb, keys[0], after, limit, true)
	}
	if limit < 1 || limit > MaxPage {
		return nil, fmt.Errorf("page %d shards: limit %d outside 1..%d", len(keys), limit, MaxPage)
	}
	top, cur := "+inf", ""
	if after != nil {
		m, ok := after.Member.(string)
		if !ok || m == "" {
			return nil, fmt.Errorf("page %d shards: cursor member must be a non-empty string", len(keys))
		}
		top, cur = strconv.FormatFloat(after.Score, 'f', -1, 64), m
	}
	shards := make([]shardPage, len(keys))
	for i, k := range keys {
		shards[i].key = k
	}
	for range pageRounds {
		more, err := readShards(ctx, rdb, shards, top, after, cur, limit)
		if err != nil || !more {
			return mergePages(shards, limit), err
		}
	}
	return mergePages(shards, limit), nil
}

// shardPage is what PageShards read of one shard so far.
type shardPage struct {
	key    string
	offset int64
	got    []redis.Z
	done   bool // the shard has nothing more after what was read
}

// readShards reads, in one pipeline, the next members of every shard that
// has fewer than limit members after the cursor and is not exhausted;
// false when none was read.
func readShards(ctx context.Context, rdb redis.Cmdable, shards []shardPage, top string, after *redis.Z, cur string, limit int) (bool, error) {
	pipe := rdb.Pipeline()
	cmds := make([]*redis.ZSliceCmd, len(shards))
	for i, sh := range shards {
		if !sh.done && len(sh.got) < limit {
			cmds[i] = pipe.ZRevRangeByScoreWithScores(ctx, sh.key, &redis.ZRangeBy{Max: top, Min: "-inf", Offset: sh.offset, Count: int64(limit + fetchSlack)})
		}
	}
	if pipe.Len() == 0 {
		return false, nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return false, fmt.Errorf("page %d shards: %w", len(shards), err)
	}
	for i, c := range cmds {
		if c == nil {
			continue
		}
		zs := c.Val()
		sh := &shards[i]
		sh.offset += int64(len(zs))
		sh.done = len(zs) < limit+fetchSlack
		for _, z := range zs {
			if after == nil || z.Score < after.Score || (z.Score == after.Score && z.Member.(string) < cur) {
				sh.got = append(sh.got, z)
			}
		}
	}
	return true, nil
}

// mergePages merges the shards' members, highest (score, member) first,
// and keeps the first limit.
func mergePages(shards []shardPage, limit int) []redis.Z {
	var all []redis.Z
	for _, sh := range shards {
		all = append(all, sh.got...)
	}
	slices.SortFunc(all, func(a, b redis.Z) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(b.Member.(string), a.Member.(string)))
	})
	return all[:min(len(all), limit)]
}
