package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestAdminReindex moves a namespace's run indexes with braid admin
// reindex, from the services' settings, and refuses bad counts, an
// unreachable Redis and a running orchestrator.
func TestAdminReindex(t *testing.T) {
	t.Parallel()
	srv := testinfra.StartRedis(t)
	rdb := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := testinfra.UniqueName(t, "ns") + ":"
	one := statestore.Keys{Namespace: ns}
	require.NoError(t, one.CheckLayout(ctx, rdb))
	runs := []string{"01a2aaaa-0000-7000-8000-000000000001", "01a2aaaa-0000-7000-8000-000000000002", "01a2aaaa-0000-7000-8000-000000000003"}
	for i, run := range runs {
		require.NoError(t, rdb.ZAdd(ctx, one.AllRunsOf(run), redis.Z{Score: float64(i), Member: run}).Err())
		require.NoError(t, rdb.ZAdd(ctx, one.WorkflowRunsOf("wf", run), redis.Z{Score: float64(i), Member: run}).Err())
	}
	env := map[string]string{"BRAID_REDIS_URL": srv.URL, "BRAID_REDIS_NAMESPACE": ns, "BRAID_REDIS_INDEX_SHARDS": "4"}

	require.NoError(t, rdb.Set(ctx, one.Leader("scheduler"), "o1", time.Minute).Err())
	r := braid(t, env, "", "admin", "reindex")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "an orchestrator holds the scheduler lease")
	require.NoError(t, rdb.Del(ctx, one.Leader("scheduler")).Err())

	r = braid(t, env, "", "admin", "reindex")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "Moved the run indexes from 1 to 4 shards: ")
	require.Contains(t, r.stdout, "Start the services with BRAID_REDIS_INDEX_SHARDS=4.")
	require.Equal(t, "Copying the entries of 5 index keys: 0 done, 3 entries copied so far\nRemoving the old index keys: 0 of 5 done\n", r.stderr,
		"progress goes to stderr (the four fixed families and the workflow's index)")
	four := statestore.Keys{Namespace: ns, Shards: 4}
	require.NoError(t, four.CheckLayout(ctx, rdb))
	for _, run := range runs {
		require.NoError(t, rdb.ZScore(ctx, four.AllRunsOf(run), run).Err(), "run %s in its shard", run)
		require.NoError(t, rdb.ZScore(ctx, four.WorkflowRunsOf("wf", run), run).Err(), "run %s in its workflow's shard", run)
	}
	require.Zero(t, rdb.Exists(ctx, one.AllRunShards()[0], one.WorkflowRunShards("wf")[0]).Val(), "the unsharded indexes are gone")

	r = braid(t, env, "", "admin", "reindex", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var st struct {
		From, To, Keys int
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.Equal(t, 4, st.From)
	require.Equal(t, 4, st.To)
	require.Zero(t, st.Keys, "already in 4 shards")

	r = braid(t, env, "", "admin", "reindex", "--shards", "2")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "from 4 to 2 shards")

	for _, bad := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{env, []string{"--shards", "0"}, "the count must be 1 to 256"},
		{env, []string{"--shards", "257"}, "the count must be 1 to 256"},
		{map[string]string{"BRAID_REDIS_URL": srv.URL, "BRAID_REDIS_INDEX_SHARDS": "x"}, nil, "BRAID_REDIS_INDEX_SHARDS"},
		{env, []string{"extra"}, "takes no arguments"},
	} {
		r = braid(t, bad.env, "", append([]string{"admin", "reindex"}, bad.args...)...)
		require.Equal(t, 2, r.code, "%v: %s", bad.args, r.stderr)
		require.Contains(t, r.stderr, bad.want)
	}
	r = braid(t, map[string]string{"BRAID_REDIS_URL": "redis://127.0.0.1:1/0"}, "", "admin", "reindex", "--shards", "2")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "BRAID_REDIS_URL")
}

// TestReindexReporter: a line when each phase starts, then one every
// interval while the phase lasts, none for the phase's last report.
func TestReindexReporter(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	now := time.Unix(0, 0)
	report := reindexReporter(&out, 2*time.Second, func() time.Time { return now })
	step := func(d time.Duration, p statestore.ReindexProgress) {
		now = now.Add(d)
		report(p)
	}
	step(0, statestore.ReindexProgress{Phase: "copy", KeysDone: 0, Keys: 3, Entries: 1000})
	step(time.Second, statestore.ReindexProgress{Phase: "copy", KeysDone: 0, Keys: 3, Entries: 2000})
	step(1500*time.Millisecond, statestore.ReindexProgress{Phase: "copy", KeysDone: 1, Keys: 3, Entries: 3000})
	step(100*time.Millisecond, statestore.ReindexProgress{Phase: "copy", KeysDone: 2, Keys: 3, Entries: 3500})
	step(5*time.Second, statestore.ReindexProgress{Phase: "copy", KeysDone: 3, Keys: 3, Entries: 3600})
	step(0, statestore.ReindexProgress{Phase: "clean", KeysDone: 0, Keys: 3, Entries: 3600})
	step(3*time.Second, statestore.ReindexProgress{Phase: "clean", KeysDone: 1, Keys: 3, Entries: 3600})
	step(3*time.Second, statestore.ReindexProgress{Phase: "clean", KeysDone: 3, Keys: 3, Entries: 3600})
	require.Equal(t, `Copying the entries of 3 index keys: 0 done, 1000 entries copied so far
Copying the entries of 3 index keys: 1 done, 3000 entries copied so far
Removing the old index keys: 0 of 3 done
Removing the old index keys: 1 of 3 done
`, out.String())
}
