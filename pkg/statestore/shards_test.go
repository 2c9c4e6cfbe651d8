package statestore_test

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestShardKeys: one shard keeps the single-server key names byte for
// byte; N shards put each family of one shard under one hash tag, in the
// s-th of N equal slot ranges, and a run's entries in its shard.
func TestShardKeys(t *testing.T) {
	t.Parallel()
	one := statestore.Keys{Namespace: "ns:"}
	require.Equal(t, []string{"braid:ns:runs:all"}, one.AllRunShards())
	require.Equal(t, "braid:ns:runs:active", one.ActiveRunsOf("r1"))
	require.Equal(t, "braid:ns:wf:{w}:runs", one.WorkflowRunsOf("w", "r1"))
	require.Equal(t, "braid:ns:timers", one.TimersOf("r1"))

	k := statestore.Keys{Namespace: "ns:", Shards: 16}
	all := k.AllRunShards()
	require.Len(t, all, 16)
	for s, key := range all {
		slot := statestore.HashSlot(key)
		require.GreaterOrEqual(t, slot, s*statestore.SlotCount/16, key)
		require.Less(t, slot, (s+1)*statestore.SlotCount/16, key)
		for _, other := range []string{k.ActiveRunShards()[s], k.TimerShards()[s], k.WorkflowRunShards("w")[s]} {
			require.Equal(t, slot, statestore.HashSlot(other), "one shard, one slot: %s and %s", key, other)
		}
	}
	// Golden: the table is part of the data layout; changing it hides runs.
	require.Equal(t, []string{"ix.0.23", "ix.1.20", "ix.2.10", "ix.3.13", "ix.4.40", "ix.5.43", "ix.6.2", "ix.7.1",
		"ix.8.0", "ix.9.3", "ix.10.3", "ix.11.0", "ix.12.40", "ix.13.43", "ix.14.11", "ix.15.12"}, tagsOf(all))
	for _, run := range []string{"r1", "01a2188e-b772-771c-adce-52c651f56631"} {
		s := k.ShardOf(run)
		require.Equal(t, all[s], k.AllRunsOf(run))
		require.Equal(t, k.TimerShards()[s], k.TimersOf(run))
	}
}

// TestPageShardsAcrossTies pages a sharded index whose runs share a few
// creation times (as runs started in one millisecond do): every run comes
// exactly once, newest first, (score, member) order, whatever the page size.
func TestPageShardsAcrossTies(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	k := statestore.Keys{Namespace: e.keys.Namespace, Shards: 4}
	var want []redis.Z
	for i := range 60 {
		id := fmt.Sprintf("run-%02d", i)
		z := redis.Z{Score: float64(1000 + i%5), Member: id}
		want = append(want, z)
		require.NoError(t, e.rdb.ZAdd(e.ctx, k.AllRunsOf(id), z).Err())
	}
	slices.SortFunc(want, func(a, b redis.Z) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(b.Member.(string), a.Member.(string)))
	})
	used := map[int]bool{}
	for _, id := range members(want) {
		used[k.ShardOf(id)] = true
	}
	require.Len(t, used, 4, "the runs spread over every shard")
	for _, limit := range []int{1, 2, 7, 60, 100} {
		var got []redis.Z
		var after *redis.Z
		for range 100 {
			page, err := statestore.PageShards(e.ctx, e.rdb, k.AllRunShards(), after, limit)
			require.NoError(t, err)
			got = append(got, page...)
			if len(page) < limit {
				break
			}
			after = &page[len(page)-1]
		}
		require.Equal(t, members(want), members(got), "limit %d", limit)
	}
}

// TestCheckLayout: the first service records its shard count; one with
// another count is refused, naming the setting to use.
func TestCheckLayout(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	k16 := statestore.Keys{Namespace: e.keys.Namespace, Shards: 16}
	require.NoError(t, k16.CheckLayout(e.ctx, e.rdb))
	require.NoError(t, k16.CheckLayout(e.ctx, e.rdb), "the same count again")
	err := e.keys.CheckLayout(e.ctx, e.rdb)
	require.True(t, errors.Is(err, statestore.ErrLayout), "%v", err)
	require.ErrorContains(t, err, "set it to 16")
	other := statestore.Keys{Namespace: testinfra.UniqueName(t, "other") + ":"}
	require.NoError(t, other.CheckLayout(e.ctx, e.rdb), "a namespace of its own")
}

// tagsOf is the hash tag of each key.
func tagsOf(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		open, end := strings.IndexByte(k, '{'), strings.IndexByte(k, '}')
		out[i] = k[open+1 : end]
	}
	return out
}
