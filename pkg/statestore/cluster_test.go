package statestore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/statestore/statestoretest"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedisCluster runs the state store's contract (statestoretest) and
// every script on a real Redis Cluster of three masters and three
// replicas, through a go-redis ClusterClient with the SlotCheck hook: the
// cluster itself refuses a script whose keys span slots (CROSSSLOT), a
// multi-key command across slots, or a script reaching a key of another
// node, and the hook names the script that did it.
func TestRedisCluster(t *testing.T) {
	t.Parallel()
	cluster := testinfra.StartRedisCluster(t)
	cc := cluster.Client(t)
	check := slotChecked(t, cc)
	t.Run("Conformance", func(t *testing.T) {
		statestoretest.RunConformance(t, func(t *testing.T) statestoretest.Harness {
			return statestoretest.Harness{Client: cc, Keys: statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}}
		})
	})
	t.Run("EveryScript", func(t *testing.T) {
		k := statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}
		exerciseScripts(t, cc, k)
		requireEveryScriptChecked(t, check)
		exerciseCrossSlotPipelines(t, cc, k)
	})
	t.Run("Reindex", func(t *testing.T) {
		exerciseReindex(t, cc, testinfra.UniqueName(t, "ns")+":", []int{4, 5, 16})
	})
}

// exerciseCrossSlotPipelines runs, after exerciseScripts, the store's
// reads and writes whose pipelines mix slots (go-redis splits them by
// node) and checks they see what exerciseScripts wrote.
func exerciseCrossSlotPipelines(t *testing.T, rdb redis.UniversalClient, k statestore.Keys) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sums, err := k.RunSummaries(ctx, rdb, "r1", "r2", "missing")
	require.NoError(t, err)
	require.Equal(t, []string{"running", "running", ""}, []string{sums[0][records.FieldStatus], sums[1][records.FieldStatus], sums[2][records.FieldStatus]})
	statuses, err := k.RunStatuses(ctx, rdb, []string{"r1", "missing", "r2"})
	require.NoError(t, err)
	require.Equal(t, []string{"running", "", "running"}, statuses)
	run, err := k.LoadRun(ctx, rdb, "r1")
	require.NoError(t, err)
	require.True(t, run.Started())
	fo, err := k.LoadFanOut(ctx, rdb, "r1", "F")
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, fo.Items)

	_, err = k.RenewLiveness(ctx, rdb, "w1", "i1", time.Minute)
	require.NoError(t, err)
	require.NoError(t, rdb.Set(ctx, k.Claim("r2", "A", 0, 1), "i1/w1", time.Minute).Err())
	facts, err := k.ClaimFacts(ctx, rdb, []statestore.Attempt{{Run: "r1", Node: "A", Attempt: 1}, {Run: "r2", Node: "A", Attempt: 1}})
	require.NoError(t, err)
	require.Equal(t, []statestore.ClaimState{statestore.ClaimNone, statestore.ClaimLive}, []statestore.ClaimState{facts[0].State, facts[1].State})

	infos, err := k.WorkflowInfos(ctx, rdb, "wf", "other")
	require.NoError(t, err)
	require.Equal(t, []int{2, 0}, []int{infos[0].Latest, infos[1].Latest})
	require.NoError(t, k.DeleteWorkflow(ctx, rdb, "wf", time.Now()))
	schedules, err := k.GetSchedules(ctx, rdb, "s1", "s2")
	require.NoError(t, err)
	require.Equal(t, []*statestore.StoredSchedule{nil, nil}, schedules, "exerciseScripts deleted s1")
}

// TestNewClientFollowsAFailover: a client from NewClient with a cluster URL
// reads a key of a killed master's slots from the promoted replica within
// seconds. go-redis's default (re-read the slot map every 60 s) kept
// sending those slots to the dead node for about a minute.
func TestNewClientFollowsAFailover(t *testing.T) {
	t.Parallel()
	cluster := testinfra.StartRedisCluster(t)
	ctx := context.Background()
	rdb, err := statestore.NewClient(ctx, cluster.URL, 10*time.Second)
	require.NoError(t, err)
	defer rdb.Close()
	key := ""
	for i := 0; key == ""; i++ {
		if k := "failover-" + strconv.Itoa(i); testinfra.Slot(k) < 5461 { // the first master's third
			key = k
		}
	}
	require.NoError(t, rdb.Set(ctx, key, "kept", 0).Err())
	cluster.SyncReplicas(t)
	cluster.KillMaster(t, 0)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		got, err := rdb.Get(cctx, key).Result()
		require.NoError(c, err, "the client still sends the killed master's slots to it")
		require.Equal(c, "kept", got)
	}, 20*time.Second, 100*time.Millisecond, "20 s after the failover")
}

// TestLeastPrivilegeUserOnCluster: the ACL user the README gives the
// services (keys under braid: only, no @dangerous command), set on every
// node, is enough for a cluster client: it reads the slot map, runs the
// scripts and pipelines across nodes.
func TestLeastPrivilegeUserOnCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cluster := testinfra.StartRedisClusterWith(t, testinfra.RedisClusterConfig{Password: "admin-pw"})
	for _, addr := range cluster.Addrs {
		admin := redis.NewClient(&redis.Options{Addr: addr, Password: "admin-pw"})
		err := admin.Do(ctx, "ACL", "SETUSER", "braid", "on", ">braid-pw", "~braid:*", "&*", "+@all", "-@dangerous").Err()
		require.NoError(t, admin.Close())
		require.NoError(t, err, addr)
	}
	url := strings.Replace(cluster.URL, "redis-cluster://:admin-pw@", "redis-cluster://braid:braid-pw@", 1)
	require.NotEqual(t, cluster.URL, url)
	rdb, err := statestore.NewClient(ctx, url, 10*time.Second)
	require.NoError(t, err)
	defer rdb.Close()
	require.NoError(t, statestore.LoadScripts(ctx, rdb))
	k := statestore.Keys{Namespace: "acl:", Shards: 16}
	require.NoError(t, k.CheckLayout(ctx, rdb))
	for i := range 20 {
		p := statestore.PendingRun{ID: "r" + strconv.Itoa(i), Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.Now()}
		created, err := k.CreatePendingRun(ctx, rdb, p)
		require.NoError(t, err)
		require.True(t, created)
	}
	page, err := statestore.PageShards(ctx, rdb, k.AllRunShards(), nil, 100)
	require.NoError(t, err)
	require.Len(t, page, 20)
	require.Error(t, rdb.Set(ctx, "outside", "x", 0).Err(), "keys outside braid: are refused")
}
