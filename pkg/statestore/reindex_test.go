package statestore_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestReindex moves a namespace's indexes through several shard counts on
// one server, cut short and resumed, and refuses while an orchestrator
// holds a lease.
func TestReindex(t *testing.T) {
	t.Parallel()
	rdb := testinfra.StartRedis(t).Client(t)
	exerciseReindex(t, rdb, testinfra.UniqueName(t, "ns")+":", []int{4, 5, 16, 3, 1})
}

// indexEntries is every index entry of a namespace: family → member → score.
type indexEntries map[string]map[string]float64

// fillIndexes writes the indexes of 240 runs in layout k as the services
// do: every run in all-runs and its workflow's index (three workflows),
// every third active, every fifth with two timers; plus one timer member
// that names no run. It returns what a re-index must keep.
func fillIndexes(t *testing.T, ctx context.Context, rdb redis.UniversalClient, k statestore.Keys) indexEntries {
	t.Helper()
	want := indexEntries{"all": {}, "active": {}, "busy": {}, "timers": {}}
	for _, wf := range []string{"alpha", "beta", "gone"} {
		want["wf:"+wf] = map[string]float64{}
	}
	pipe := rdb.Pipeline()
	for i := range 240 {
		run := fmt.Sprintf("01a2%04d-0000-7000-8000-%012d", i, i*7919)
		wf := []string{"alpha", "beta", "gone"}[i%3]
		score := float64(1_795_000_000_000 + i)
		pipe.ZAdd(ctx, k.AllRunsOf(run), redis.Z{Score: score, Member: run})
		pipe.ZAdd(ctx, k.WorkflowRunsOf(wf, run), redis.Z{Score: score, Member: run})
		want["all"][run], want["wf:"+wf][run] = score, score
		if i%3 == 0 {
			pipe.ZAdd(ctx, k.ActiveRunsOf(run), redis.Z{Score: score, Member: run})
			want["active"][run] = score
		}
		if i%6 == 0 {
			pipe.ZAdd(ctx, k.BusyRunsOf(run), redis.Z{Score: score, Member: run})
			want["busy"][run] = score
		}
		if i%5 == 0 {
			for kind := 1; kind <= 2; kind++ {
				m := statestore.Timer{Run: run, Kind: kind, Node: "n", Attempt: 1}.Member()
				pipe.ZAdd(ctx, k.TimersOf(run), redis.Z{Score: score + 60_000, Member: m})
				want["timers"][m] = score + 60_000
			}
		}
	}
	pipe.ZAdd(ctx, k.TimerShards()[0], redis.Z{Score: 1, Member: "no run here"})
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	return want
}

// readIndexes reads every index of layout k and checks each entry sits in
// the shard its run belongs to.
func readIndexes(t *testing.T, ctx context.Context, rdb redis.UniversalClient, k statestore.Keys) indexEntries {
	t.Helper()
	got := indexEntries{}
	read := func(fam string, keys []string, home func(member string) string) {
		got[fam] = map[string]float64{}
		for _, key := range keys {
			zs, err := rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
			require.NoError(t, err)
			for _, z := range zs {
				m := z.Member.(string)
				require.Equal(t, home(m), key, "%s entry %q is in the wrong shard of %d", fam, m, k.Shards)
				got[fam][m] = z.Score
			}
		}
	}
	read("all", k.AllRunShards(), k.AllRunsOf)
	read("active", k.ActiveRunShards(), k.ActiveRunsOf)
	read("busy", k.BusyRunShards(), k.BusyRunsOf)
	read("timers", k.TimerShards(), func(m string) string {
		tm, err := statestore.ParseTimer(m)
		require.NoError(t, err, "a timer that names no run is dropped")
		return k.TimersOf(tm.Run)
	})
	for _, wf := range []string{"alpha", "beta", "gone"} {
		read("wf:"+wf, k.WorkflowRunShards(wf), func(run string) string { return k.WorkflowRunsOf(wf, run) })
	}
	return got
}

// namespaceKeys lists every key of the namespace, on every master.
func namespaceKeys(t *testing.T, ctx context.Context, rdb redis.UniversalClient, ns string) []string {
	t.Helper()
	out, err := statestore.ScanKeys(ctx, rdb, statestore.Prefix+ns+"*")
	require.NoError(t, err)
	sort.Strings(out)
	return out
}

// layoutKeySet is every key layout k may hold in its namespace: its index
// keys and the layout record.
func layoutKeySet(k statestore.Keys) map[string]bool {
	out := map[string]bool{k.Layout(): true}
	for _, fam := range [][]string{k.AllRunShards(), k.ActiveRunShards(), k.BusyRunShards(), k.TimerShards(),
		k.WorkflowRunShards("alpha"), k.WorkflowRunShards("beta"), k.WorkflowRunShards("gone")} {
		for _, key := range fam {
			out[key] = true
		}
	}
	return out
}

// exerciseReindex fills a namespace's indexes unsharded and re-indexes
// them to each count of steps in turn: after each, every entry is kept in
// its shard of the new layout, nothing of the old layout is left, services
// of the new count start and of the old do not. The second step is cut
// short after copying and the third after cleaning, then finished. Some
// counts share keys (4 and 5 shards: three of their first four shards
// have the same tag), whose entries stay and are sorted in place.
func exerciseReindex(t *testing.T, rdb redis.UniversalClient, ns string, steps []int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k := statestore.Keys{Namespace: ns}
	require.NoError(t, k.CheckLayout(ctx, rdb), "a service started unsharded")
	want := fillIndexes(t, ctx, rdb, k)
	delete(want["timers"], "no run here")

	require.NoError(t, rdb.Set(ctx, k.Leader("maintenance"), "orchestrator-1", time.Minute).Err())
	_, err := k.Reindex(ctx, rdb, steps[0], nil)
	require.ErrorIs(t, err, statestore.ErrServicesRunning, "an orchestrator holds the maintenance lease")
	require.NoError(t, rdb.Del(ctx, k.Leader("maintenance")).Err())
	_, err = k.Reindex(ctx, rdb, 0, nil)
	require.ErrorContains(t, err, "must be 1 to 256")

	from := 1
	for i, to := range steps {
		cut := map[int]string{1: "copied", 2: "cleaned"}[i]
		if cut != "" {
			_, err := k.ReindexThen(ctx, rdb, to, func(phase string) error {
				if phase == cut {
					return errors.New("killed")
				}
				return nil
			})
			require.ErrorContains(t, err, "killed")
			err = statestore.Keys{Namespace: ns, Shards: to}.CheckLayout(ctx, rdb)
			require.ErrorIs(t, err, statestore.ErrLayout, "no service starts while a re-index is unfinished")
			require.ErrorContains(t, err, "being moved")
			_, err = k.Reindex(ctx, rdb, to+1, nil)
			require.ErrorContains(t, err, "was interrupted", "another target is refused until it is finished")
		}
		var reports []statestore.ReindexProgress
		st, err := k.Reindex(ctx, rdb, to, func(p statestore.ReindexProgress) { reports = append(reports, p) })
		require.NoError(t, err, "re-index %d → %d", from, to)
		requireProgress(t, reports, st)
		require.Equal(t, from, st.From)
		require.Equal(t, to, st.To)
		require.Equal(t, cut != "", st.Resumed)
		if i == 0 {
			require.Equal(t, 1, st.Malformed, "the timer that names no run")
		}
		neu := statestore.Keys{Namespace: ns, Shards: to}
		require.Equal(t, want, readIndexes(t, ctx, rdb, neu), "after %d → %d", from, to)
		for _, key := range namespaceKeys(t, ctx, rdb, ns) {
			require.True(t, layoutKeySet(neu)[key], "after %d → %d: %s is left", from, to, key)
		}
		require.NoError(t, neu.CheckLayout(ctx, rdb), "services with %d shards start", to)
		err = statestore.Keys{Namespace: ns, Shards: from}.CheckLayout(ctx, rdb)
		require.ErrorIs(t, err, statestore.ErrLayout, "services with the old count do not")
		st, err = k.Reindex(ctx, rdb, to, nil)
		require.NoError(t, err)
		require.Zero(t, st.Keys, "again: nothing to do")
		from = to
	}
}

// requireProgress checks a re-index's progress reports: the copy through
// every key, then the clean through every key, neither going back, and
// the copied entries counting up to what the re-index copied.
func requireProgress(t *testing.T, reports []statestore.ReindexProgress, st statestore.ReindexStats) {
	t.Helper()
	require.NotEmpty(t, reports)
	last := statestore.ReindexProgress{Phase: "copy"}
	for _, p := range reports {
		require.Equal(t, st.Keys, p.Keys, "%+v", p)
		if p.Phase == last.Phase {
			require.GreaterOrEqual(t, p.KeysDone, last.KeysDone, "%+v after %+v", p, last)
		} else {
			require.Equal(t, "clean", p.Phase, "%+v after %+v", p, last)
			require.Equal(t, "copy", last.Phase)
			require.Equal(t, last.Keys, last.KeysDone, "the copy finished before the clean: %+v", last)
		}
		require.GreaterOrEqual(t, p.Entries, last.Entries, "%+v after %+v", p, last)
		require.LessOrEqual(t, p.KeysDone, p.Keys, "%+v", p)
		last = p
	}
	require.Equal(t, statestore.ReindexProgress{Phase: "clean", KeysDone: st.Keys, Keys: st.Keys, Entries: st.Entries}, last)
}
