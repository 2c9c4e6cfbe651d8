package statestore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// layoutReindexTo is Layout's field naming the shard count a re-index in
// progress moves the indexes to; while it is set no service starts
// (CheckLayout) and only Reindex to that count may go on.
const layoutReindexTo = "reindex_to"

// ErrServicesRunning says Reindex found an orchestrator running: the
// indexes may only move while no api or orchestrator writes them.
var ErrServicesRunning = errors.New("services are running")

// ReindexStats says what Reindex did.
type ReindexStats struct {
	// From and To are the shard counts before and after.
	From int `json:"from"`
	To   int `json:"to"`
	// Keys is the number of index keys of the old layout read; Entries the
	// entries copied to another key; Malformed the timers that named no
	// run (dropped: the timer poll drops them too).
	Keys      int `json:"keys"`
	Entries   int `json:"entries"`
	Malformed int `json:"malformed_timers"`
	// Resumed is true when an interrupted re-index to To was finished.
	Resumed bool `json:"resumed"`
}

// ReindexProgress is how far a re-index has come, as Reindex reports it
// after each page of entries and each key.
type ReindexProgress struct {
	// Phase is "copy" (entries to their keys in the new layout) or "clean"
	// (the old keys removed or sorted).
	Phase string
	// KeysDone of Keys old index keys are through the phase; Entries is the
	// entries copied so far.
	KeysDone, Keys, Entries int
}

// reindexPage is how many entries Reindex reads and writes per round trip.
const reindexPage = 1000

// Reindex moves the cross-run indexes — every run, the active and busy runs, each
// workflow's runs (deleted workflows' too) and the durable timers — from
// the shard count recorded in Layout to to shards, and records to: what
// an operator runs, with every api and orchestrator stopped, before
// starting them with BRAID_REDIS_INDEX_SHARDS=to (more masters want more
// shards). k.Shards is not used: the recorded count is the source.
//
// It is safe to interrupt and run again: Layout records the target first
// (reindex_to; services refuse to start while it is set), then every entry
// is copied to its key in the new layout (ZADD of the same member and
// score), then the old keys are deleted — or, where an old key is also a
// key of the new layout, the entries that belong elsewhere are removed
// from it — and only then is the new count recorded. A run again finishes
// what an interrupted one left, and refuses another target until then. It
// refuses while an orchestrator holds the maintenance or scheduler lease
// (ErrServicesRunning). progress, unless nil, is called after each page
// of entries and each key, on Reindex's goroutine.
func (k Keys) Reindex(ctx context.Context, rdb redis.UniversalClient, to int, progress func(ReindexProgress)) (ReindexStats, error) {
	return k.reindex(ctx, rdb, to, progress, nil)
}

// reindex is Reindex with a hook called between its phases ("copied",
// "cleaned"): an error from it stops the re-index there (tests cut it short).
func (k Keys) reindex(ctx context.Context, rdb redis.UniversalClient, to int, progress func(ReindexProgress), after func(phase string) error) (ReindexStats, error) {
	if progress == nil {
		progress = func(ReindexProgress) {}
	}
	if to < 1 || to > MaxIndexShards {
		return ReindexStats{}, fmt.Errorf("re-index to %d shards: the count must be 1 to %d", to, MaxIndexShards)
	}
	if err := k.refuseIfRunning(ctx, rdb); err != nil {
		return ReindexStats{}, err
	}
	from, pending, err := k.readLayout(ctx, rdb)
	if err != nil {
		return ReindexStats{}, err
	}
	st := ReindexStats{From: from, To: to, Resumed: pending != 0}
	switch {
	case pending != 0 && pending != to:
		return st, fmt.Errorf("a re-index from %d to %d shards was interrupted (%s field %s); finish it first: run it again with %d shards",
			from, pending, k.Layout(), layoutReindexTo, pending)
	case pending == 0 && from == to:
		return st, nil
	}
	if err := rdb.HSet(ctx, k.Layout(), layoutReindexTo, to).Err(); err != nil {
		return st, fmt.Errorf("record re-index target in %s: %w", k.Layout(), err)
	}
	old, neu := k, k
	old.Shards, neu.Shards = from, to
	keys, err := old.indexKeys(ctx, rdb)
	if err != nil {
		return st, err
	}
	st.Keys = len(keys)
	for i, ik := range keys {
		report := func() { progress(ReindexProgress{Phase: "copy", KeysDone: i, Keys: len(keys), Entries: st.Entries}) }
		if err := reindexKey(ctx, rdb, ik, neu, &st, false, report); err != nil {
			return st, err
		}
	}
	progress(ReindexProgress{Phase: "copy", KeysDone: len(keys), Keys: len(keys), Entries: st.Entries})
	if err := hook(after, "copied"); err != nil {
		return st, err
	}
	targets := neu.layoutKeys(keys)
	for i, ik := range keys {
		report := func() { progress(ReindexProgress{Phase: "clean", KeysDone: i, Keys: len(keys), Entries: st.Entries}) }
		if targets[ik.key] {
			err = reindexKey(ctx, rdb, ik, neu, &st, true, report)
		} else {
			err = rdb.Unlink(ctx, ik.key).Err()
		}
		if err != nil {
			return st, fmt.Errorf("remove old index %s: %w", ik.key, err)
		}
		report()
	}
	progress(ReindexProgress{Phase: "clean", KeysDone: len(keys), Keys: len(keys), Entries: st.Entries})
	if err := hook(after, "cleaned"); err != nil {
		return st, err
	}
	pipe := rdb.TxPipeline()
	pipe.HSet(ctx, k.Layout(), layoutShards, to)
	pipe.HDel(ctx, k.Layout(), layoutReindexTo)
	if _, err := pipe.Exec(ctx); err != nil {
		return st, fmt.Errorf("record %d index shards in %s: %w", to, k.Layout(), err)
	}
	return st, nil
}

func hook(after func(string) error, phase string) error {
	if after == nil {
		return nil
	}
	return after(phase)
}

// refuseIfRunning returns ErrServicesRunning while an orchestrator holds a
// duty lease (it releases them when it stops; they expire when it dies).
func (k Keys) refuseIfRunning(ctx context.Context, rdb redis.Cmdable) error {
	for _, duty := range []string{"maintenance", "scheduler"} {
		ttl, err := rdb.PTTL(ctx, k.Leader(duty)).Result()
		if err != nil {
			return fmt.Errorf("read lease %s: %w", k.Leader(duty), err)
		}
		if ttl > 0 || ttl == -1 {
			return fmt.Errorf("%w: an orchestrator holds the %s lease (%s, %v left); stop every api and orchestrator first (a killed one's lease expires by itself)",
				ErrServicesRunning, duty, k.Leader(duty), ttl.Round(time.Millisecond))
		}
	}
	return nil
}

// readLayout reads the recorded shard count (1 when none is: every
// version before Layout existed wrote the indexes unsharded) and the
// target of an interrupted re-index (0: none).
func (k Keys) readLayout(ctx context.Context, rdb redis.Cmdable) (from, pending int, err error) {
	vals, err := rdb.HMGet(ctx, k.Layout(), layoutShards, layoutReindexTo).Result()
	if err != nil {
		return 0, 0, fmt.Errorf("read index layout %s: %w", k.Layout(), err)
	}
	from = 1
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxIndexShards {
			return 0, 0, fmt.Errorf("index layout %s: field %q is %q, not a shard count", k.Layout(), []string{layoutShards, layoutReindexTo}[i], s)
		}
		if i == 0 {
			from = n
		} else {
			pending = n
		}
	}
	return from, pending, nil
}

// indexKey is one index key of a layout and how to place its entries.
type indexKey struct {
	key string
	// dest is the key of layout k an entry (member) belongs in; "" for a
	// member that names no run.
	dest func(k Keys, member string) string
}

// indexKeys lists k's index keys that exist: the fixed families of every
// shard, and every workflow runs index found by SCAN on every master
// (deleted workflows keep theirs).
func (k Keys) indexKeys(ctx context.Context, rdb redis.UniversalClient) ([]indexKey, error) {
	fams := []struct {
		shards []string
		dest   func(Keys, string) string
	}{
		{k.AllRunShards(), Keys.AllRunsOf},
		{k.ActiveRunShards(), Keys.ActiveRunsOf},
		{k.BusyRunShards(), Keys.BusyRunsOf},
		{k.TimerShards(), func(n Keys, m string) string {
			t, err := ParseTimer(m)
			if err != nil {
				return ""
			}
			return n.TimersOf(t.Run)
		}},
	}
	var out []indexKey
	for _, f := range fams {
		for _, key := range f.shards {
			out = append(out, indexKey{key: key, dest: f.dest})
		}
	}
	names, err := k.workflowIndexNames(ctx, rdb)
	if err != nil {
		return nil, err
	}
	for key, name := range names {
		out = append(out, indexKey{key: key, dest: func(n Keys, run string) string { return n.WorkflowRunsOf(name, run) }})
	}
	return out, nil
}

// workflowIndexNames finds the workflow runs index keys of k's layout and
// the workflow each belongs to.
func (k Keys) workflowIndexNames(ctx context.Context, rdb redis.UniversalClient) (map[string]string, error) {
	var pattern string
	if k.Sharded() {
		pattern = globEscape(k.base()) + "{ix.*}:wf:*:runs"
	} else {
		pattern = globEscape(k.base()) + "wf:{*}:runs"
	}
	keys, err := ScanKeys(ctx, rdb, pattern)
	if err != nil {
		return nil, fmt.Errorf("find workflow run indexes: %w", err)
	}
	found := map[string]string{}
	for _, key := range keys {
		if name, ok := k.workflowIndexName(key); ok {
			found[key] = name
		}
	}
	return found, nil
}

// workflowIndexName is the workflow whose runs index of k's layout key
// is, and whether it is one (a key of another layout is not).
func (k Keys) workflowIndexName(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, k.base())
	if !ok {
		return "", false
	}
	var name string
	if k.Sharded() {
		_, after, ok := strings.Cut(rest, "}:wf:")
		if !ok || !strings.HasPrefix(rest, "{") {
			return "", false
		}
		name, ok = strings.CutSuffix(after, ":runs")
		if !ok {
			return "", false
		}
	} else {
		inner, ok := strings.CutPrefix(rest, "wf:{")
		if !ok {
			return "", false
		}
		if name, ok = strings.CutSuffix(inner, "}:runs"); !ok {
			return "", false
		}
	}
	if name == "" {
		return "", false
	}
	for _, kk := range k.WorkflowRunShards(name) {
		if kk == key {
			return name, true
		}
	}
	return "", false
}

// layoutKeys marks which of keys are also keys of k's layout: an old key
// a new one coincides with (same shard index, same tag) keeps the entries
// that belong there.
func (k Keys) layoutKeys(keys []indexKey) map[string]bool {
	fixed := map[string]bool{}
	for _, fam := range [][]string{k.AllRunShards(), k.ActiveRunShards(), k.BusyRunShards(), k.TimerShards()} {
		for _, key := range fam {
			fixed[key] = true
		}
	}
	out := map[string]bool{}
	for _, ik := range keys {
		if _, wf := k.workflowIndexName(ik.key); fixed[ik.key] || wf {
			out[ik.key] = true
		}
	}
	return out
}

// reindexKey walks ik's entries a page at a time: without prune it copies
// each entry whose key in layout neu is another key there; with prune it
// removes those entries from ik (which is a key of neu too). It calls page
// after each page.
func reindexKey(ctx context.Context, rdb redis.UniversalClient, ik indexKey, neu Keys, st *ReindexStats, prune bool, page func()) error {
	var cursor uint64
	for {
		entries, next, err := rdb.ZScan(ctx, ik.key, cursor, "*", reindexPage).Result()
		if err != nil {
			return fmt.Errorf("read index %s: %w", ik.key, err)
		}
		pipe := rdb.Pipeline()
		var elsewhere []any
		moved := map[string][]redis.Z{} // one ZADD per destination key
		for i := 0; i+1 < len(entries); i += 2 {
			member := entries[i]
			dest := ik.dest(neu, member)
			switch {
			case dest == "" && prune:
				elsewhere = append(elsewhere, member)
			case dest == "":
				st.Malformed++
			case dest != ik.key:
				if prune {
					elsewhere = append(elsewhere, member)
					continue
				}
				score, err := strconv.ParseFloat(entries[i+1], 64)
				if err != nil {
					return fmt.Errorf("index %s: member %q has score %q", ik.key, member, entries[i+1])
				}
				moved[dest] = append(moved[dest], redis.Z{Score: score, Member: member})
				st.Entries++
			}
		}
		for dest, zs := range moved {
			pipe.ZAdd(ctx, dest, zs...)
		}
		if prune && len(elsewhere) > 0 {
			pipe.ZRem(ctx, ik.key, elsewhere...)
		}
		if pipe.Len() > 0 {
			if _, err := pipe.Exec(ctx); err != nil {
				return fmt.Errorf("re-index entries of %s: %w", ik.key, err)
			}
		}
		page()
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// ScanKeys lists the keys matching pattern (SCAN MATCH): on one server, or
// on every master of a Redis Cluster.
func ScanKeys(ctx context.Context, rdb redis.UniversalClient, pattern string) ([]string, error) {
	var (
		mu  sync.Mutex
		out []string
	)
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			out = append(out, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	} else {
		err = scan(ctx, rdb)
	}
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", pattern, err)
	}
	return out, nil
}

// globEscape escapes the glob characters of s for a SCAN MATCH pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
