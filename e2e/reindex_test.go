package e2e

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/stretchr/testify/require"
)

// TestAdminReindex moves a running deployment's run indexes to four shards
// as an operator would: stop the api and the orchestrator, run braid admin
// reindex with the services' settings, start them with
// BRAID_REDIS_INDEX_SHARDS=4. Nothing is lost: ended runs are listed (all
// and by workflow), a run waiting on a durable timer wakes on time, a run
// awaiting approval is approved and ends. An orchestrator started with the
// new count before the re-index refuses to start.
func TestAdminReindex(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 1})
	c := f.client(t)
	quick := f.register(c, "rx-quick", []faultNode{{ID: "a", Handler: "noop"}})
	sleepy := f.register(c, "rx-sleepy", []faultNode{
		{ID: "nap", Handler: "wait", Config: map[string]any{"duration": "8s"}},
		{ID: "after", Handler: "noop", DependsOn: []string{"nap"}},
	})
	gated := f.register(c, "rx-gated", []faultNode{
		{ID: "gate", Handler: "approval", Config: map[string]any{"message": "go?"}},
		{ID: "after", Handler: "noop", DependsOn: []string{"gate"}},
	})
	var ended []string
	for range 5 {
		ended = append(ended, c.start(quick, `{}`))
	}
	for _, id := range ended {
		require.Equal(t, "succeeded", c.waitDone(id, runTimeout).Status)
	}
	nap, gate := c.start(sleepy, `{}`), c.start(gated, `{}`)
	c.waitRun(nap, runTimeout, "nap waiting on its timer", func(r apiRun) bool { return r.node(t, "nap").State == "running" })
	c.waitRun(gate, runTimeout, "gate awaiting approval", func(r apiRun) bool { return r.node(t, "gate").WaitingReason == "awaiting approval" })

	api, orch := f.procNamed(t, "api"), f.procNamed(t, "orchestrator")
	for _, p := range []*proc{api, orch} {
		require.NoError(t, p.stop(procStopTimeout), "stop %s", p.name)
	}
	f.restart(orch, "BRAID_REDIS_INDEX_SHARDS=4")
	require.Error(t, orch.wait(60*time.Second), "an orchestrator with another shard count than the recorded one exits")
	require.Contains(t, orch.log(), "set it to 1")

	env := []string{"BRAID_REDIS_URL=" + f.RedisURL, "BRAID_REDIS_NAMESPACE=" + f.Namespace, "BRAID_REDIS_INDEX_SHARDS=4"}
	res := braid(t, env, "admin", "reindex")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "Moved the run indexes from 1 to 4 shards")
	require.Contains(t, res.stdout, "Start the services with BRAID_REDIS_INDEX_SHARDS=4.")
	k4 := statestore.Keys{Namespace: f.Namespace, Shards: 4}
	timers, err := f.rdb.ZRange(f.ctx(10*time.Second), k4.TimersOf(nap), 0, -1).Result()
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(timers, func(m string) bool { return strings.HasPrefix(m, nap+"|") }),
		"the waiting run's timer is in its new shard (the reconciler would re-arm it, slower): %v", timers)
	for _, id := range append(append([]string{}, ended...), nap, gate) {
		require.NoError(t, f.rdb.ZScore(f.ctx(10*time.Second), k4.AllRunsOf(id), id).Err(), "run %s in its new shard", id)
	}
	res = braid(t, env, "admin", "reindex")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "in 4 shards already")

	f.restart(orch, "BRAID_REDIS_INDEX_SHARDS=4")
	f.restart(api, "BRAID_REDIS_INDEX_SHARDS=4")
	require.NoError(t, f.waitReady())

	require.Equal(t, "succeeded", c.waitDone(nap, runTimeout).Status, "the run waiting on a timer ends")
	c.call(http.MethodPost, "/runs/"+url.PathEscape(gate)+"/tasks/gate/approve", []byte(`{}`), http.StatusAccepted, nil)
	require.Equal(t, "succeeded", c.waitDone(gate, runTimeout).Status)

	listed := func(query string) []string {
		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		c.call(http.MethodGet, "/runs?limit=100"+query, nil, http.StatusOK, &page)
		var ids []string
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		return ids
	}
	require.ElementsMatch(t, append(append([]string{}, ended...), nap, gate), listed(""), "every run is listed")
	require.ElementsMatch(t, ended, listed("&workflow="+url.QueryEscape(quick)))
	require.ElementsMatch(t, []string{gate}, listed("&workflow="+url.QueryEscape(gated)+"&status=succeeded"))
	after := c.start(quick, `{}`)
	require.Equal(t, "succeeded", c.waitDone(after, runTimeout).Status, "new runs go on in the new layout")
	require.Contains(t, listed("&workflow="+url.QueryEscape(quick)), after)
	keys, err := f.rdb.Keys(f.ctx(10*time.Second), "braid:"+f.Namespace+"runs:*").Result()
	require.NoError(t, err)
	require.Empty(t, keys, "the unsharded indexes are gone: %s", strings.Join(keys, ", "))
}
