package apisvc_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestRunWaitAnswersWithEndedRun starts runs with ?wait= against a real
// orchestrator and worker: the answer is the ended run, a replay of the
// same Idempotency-Key waits for (and returns) the same run, and GET
// ?wait= on an ended run answers with it.
func TestRunWaitAnswersWithEndedRun(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true})
	name, _ := e.register(`{"name":"waited","nodes":[{"id":"a","handler":"noop","config":{"x":1}},{"id":"b","handler":"noop","depends_on":["a"]}]}`)
	h := map[string]string{"Idempotency-Key": "wait-1"}
	resp := e.must(req{method: "POST", path: "/workflows/" + name + "/runs?wait=30s", header: h}, http.StatusOK)
	var v runView
	resp.json(t, &v)
	require.Equal(t, "succeeded", v.Status)
	require.Len(t, v.Nodes, 2)
	for _, n := range v.Nodes {
		require.Equal(t, "succeeded", n.State, n.ID)
	}
	require.Equal(t, "/runs/"+v.ID, resp.Header.Get("Location"))

	again := e.must(req{method: "POST", path: "/workflows/" + name + "/run?wait=10", header: h}, http.StatusOK)
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	var same runView
	again.json(t, &same)
	require.Equal(t, v.ID, same.ID)
	require.Equal(t, "succeeded", same.Status)

	var got runView
	e.must(req{method: "GET", path: "/runs/" + v.ID + "?wait=30s"}, http.StatusOK).json(t, &got)
	require.Equal(t, "succeeded", got.Status)

	out := e.must(req{method: "GET", path: "/runs/" + v.ID + "/tasks/a"}, http.StatusOK)
	require.Contains(t, string(out.Body), `"x":1`)
}

// TestRunWaitWokenByAnnouncement ends a run by hand (no orchestrator): the
// waiting request answers when the run-ended announcement comes. The
// re-read timer is an hour, so only the announcement can wake it in time.
func TestRunWaitWokenByAnnouncement(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{waitRecheck: time.Hour})
	name, _ := e.register(`{"name":"announced","nodes":[{"id":"a","handler":"noop"}]}`)
	answer := e.client.send(t, req{method: "POST", path: "/workflows/" + name + "/runs?wait=60s"})
	id := e.onlyRun(name)
	e.waitForWaiters(1)
	e.waitSubscribed()
	e.endRun(id, "succeeded")
	v := answer.run(t, "the announcement")
	require.Equal(t, id, v.ID)
	require.Equal(t, "succeeded", v.Status)
	require.Equal(t, 0, e.waiters(), "the waiter is gone once answered")
}

// TestRunWaitAnsweredFromTheAnnouncedRun: an announcement that carries
// the run answers the waiter with that run, without reading it again: the
// run is ended, announced and set back to pending in one transaction, so
// a waiter that read Redis would find it pending and wait for its re-read
// timer (an hour).
func TestRunWaitAnsweredFromTheAnnouncedRun(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{waitRecheck: time.Hour})
	name, _ := e.register(`{"name":"carried","nodes":[{"id":"a","handler":"noop"}]}`)
	answer := e.client.send(t, req{method: "POST", path: "/workflows/" + name + "/runs?wait=60s"})
	id := e.onlyRun(name)
	e.waitForWaiters(1)
	e.waitSubscribed()
	ctx := t.Context()
	require.NoError(t, statestore.LoadScripts(ctx, e.rdb))
	tx := e.rdb.TxPipeline()
	tx.HSet(ctx, e.keys.Run(id), records.FieldStatus, "succeeded")
	e.keys.QueueEnded(ctx, tx, id, true)
	tx.HSet(ctx, e.keys.Run(id), records.FieldStatus, "pending")
	_, err := tx.Exec(ctx)
	require.NoError(t, err)
	v := answer.run(t, "the announcement that carried the run")
	require.Equal(t, id, v.ID)
	require.Equal(t, "succeeded", v.Status)
	require.Equal(t, "pending", e.rdb.HGet(ctx, e.keys.Run(id), records.FieldStatus).Val())
}

// TestRunWaitSubscribesOnlyWhileWaiting: the api is subscribed to the
// run-ended channel only while requests wait and for WaitLinger after
// (orchestrators build no notice nobody hears); a request that comes when
// it is not subscribed is still woken by the announcement, as the re-read
// timer is an hour.
func TestRunWaitSubscribesOnlyWhileWaiting(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{waitRecheck: time.Hour, waitLinger: 100 * time.Millisecond})
	e.checkSubscribedOnlyWhileWaiting(func() int64 {
		n, err := e.rdb.PubSubNumSub(t.Context(), e.keys.EndedChannel()).Result()
		require.NoError(t, err)
		return n[e.keys.EndedChannel()]
	})
}

// TestRunWaitOnRedisCluster: the same on a Redis Cluster, through the
// cluster client; a notice published on any node answers the waiter.
func TestRunWaitOnRedisCluster(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{cluster: true, waitRecheck: time.Hour, waitLinger: 100 * time.Millisecond})
	cc, ok := e.rdb.(*redis.ClusterClient)
	require.True(t, ok)
	// A node counts its own subscribers only: add up every node's. The
	// nodes are the client's seeds (all six), each asked directly: the
	// client's slot map, which ForEachShard walks, can still miss a node
	// that joined just before it was loaded, and the api's subscription
	// goes to any node it knows.
	nodes := make([]*redis.Client, 0, len(cc.Options().Addrs))
	for _, addr := range cc.Options().Addrs {
		c := redis.NewClient(&redis.Options{Addr: addr, Password: cc.Options().Password, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		nodes = append(nodes, c)
	}
	e.checkSubscribedOnlyWhileWaiting(func() int64 {
		var n int64
		for _, c := range nodes {
			got, err := c.PubSubNumSub(t.Context(), e.keys.EndedChannel()).Result()
			require.NoError(t, err)
			n += got[e.keys.EndedChannel()]
		}
		return n
	})
}

// checkSubscribedOnlyWhileWaiting runs two rounds of a waited run, with
// subscribers counting the api's subscriptions to the run-ended channel:
// none before a request waits, one while it does (it is answered by the
// announcement alone: the env's re-read timer must be an hour), none
// again WaitLinger after it was answered.
func (e *env) checkSubscribedOnlyWhileWaiting(subscribers func() int64) {
	t := e.t
	t.Helper()
	require.Zero(t, subscribers(), "nobody waits: not subscribed")
	for round := range 2 {
		name, _ := e.register(fmt.Sprintf(`{"name":"lingering-%d","nodes":[{"id":"a","handler":"noop"}]}`, round))
		answer := e.client.send(t, req{method: "POST", path: "/workflows/" + name + "/runs?wait=60s"})
		id := e.onlyRun(name)
		e.waitForWaiters(1) // counted once announcements reach the api
		require.EqualValues(t, 1, subscribers(), "round %d: a request waits", round)
		e.endRun(id, "succeeded")
		require.Equal(t, "succeeded", answer.run(t, "the announcement").Status, "round %d", round)
		require.Eventually(t, func() bool { return subscribers() == 0 }, 30*time.Second, 10*time.Millisecond,
			"round %d: unsubscribed WaitLinger after the last waiter", round)
	}
}

// TestRunWaitRereadsWithoutAnnouncement ends a run without announcing it:
// the waiter finds it on its next re-read.
func TestRunWaitRereadsWithoutAnnouncement(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{waitRecheck: 50 * time.Millisecond})
	name, _ := e.register(`{"name":"unannounced","nodes":[{"id":"a","handler":"noop"}]}`)
	id := e.startRun(name, nil, nil)
	answer := e.client.send(t, req{method: "GET", path: "/runs/" + id + "?wait=60s"})
	e.waitForWaiters(1)
	require.NoError(t, e.rdb.HSet(t.Context(), e.keys.Run(id), records.FieldStatus, "failed").Err())
	require.Equal(t, "failed", answer.run(t, "the run ended unannounced").Status)
}

// TestRunWaitRecheckReadsStatusOnly: while a waited run has not ended, the
// re-checks read its status field alone, never the whole run (an HGET, not
// an HGETALL of the run and of every node record), and once a pass however
// many requests wait for it: 20 waiters on one run cost a pass one HGET.
func TestRunWaitRecheckReadsStatusOnly(t *testing.T) {
	t.Parallel()
	const period, waiters = 20 * time.Millisecond, 20
	e := setup(t, envOpts{waitRecheck: period})
	name, _ := e.register(`{"name":"longwait","nodes":[{"id":"a","handler":"noop"}]}`)
	id := e.startRun(name, nil, nil)
	answers := make([]*inFlight, waiters)
	for i := range answers {
		answers[i] = e.client.send(t, req{method: "GET", path: "/runs/" + id + "?wait=60s"})
	}
	e.waitForWaiters(waiters)
	ctx := t.Context()
	require.NoError(t, e.rdb.ConfigResetStat(ctx).Err())
	from := time.Now()
	calls := func(cmd string) int {
		info, err := e.rdb.Info(ctx, "commandstats").Result()
		require.NoError(t, err)
		m := regexp.MustCompile(`cmdstat_` + cmd + `:calls=(\d+)`).FindStringSubmatch(info)
		if m == nil {
			return 0
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	require.Eventually(t, func() bool { return calls("hget") >= 10 }, 20*time.Second, 10*time.Millisecond,
		"the run's status is re-checked every 20 ms")
	// The count first, then the clock: every HGET counted happened before
	// the passes are bounded. Passes that can have sent one since from: a
	// tick each period, plus one pass already under way at from, one tick
	// buffered by then (a ticker keeps one) and the tick at the end.
	hgets := calls("hget")
	passes := int(time.Since(from)/period) + 3
	require.LessOrEqual(t, hgets, passes, "one HGET a pass for %d requests waiting for one run", waiters)
	require.Zero(t, calls("hgetall"), "a recheck of a run that has not ended reads no hash whole")
	require.NoError(t, e.rdb.HSet(ctx, e.keys.Run(id), records.FieldStatus, "succeeded").Err())
	for _, a := range answers {
		require.Equal(t, "succeeded", a.run(t, "the run ended unannounced").Status)
	}
	require.Positive(t, calls("hgetall"), "the ended run is read whole to answer")
}

// TestRunWaitOver answers a run that does not end within the wait: 202
// with the run id for a start, the run as it is for a read.
func TestRunWaitOver(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	name, _ := e.register(`{"name":"slowpoke","nodes":[{"id":"a","handler":"noop"}]}`)
	resp := e.must(req{method: "POST", path: "/workflows/" + name + "/runs?wait=150ms"}, http.StatusAccepted)
	var acc struct {
		RunID string `json:"run_id"`
	}
	resp.json(t, &acc)
	require.NotEmpty(t, acc.RunID)
	require.Equal(t, "/runs/"+acc.RunID, resp.Header.Get("Location"))
	var v runView
	e.must(req{method: "GET", path: "/runs/" + acc.RunID + "?wait=150ms"}, http.StatusOK).json(t, &v)
	require.Equal(t, "pending", v.Status, "no orchestrator: the run never starts")
	e.must(req{method: "GET", path: "/runs/" + acc.RunID + "?wait=0"}, http.StatusOK)
	require.Equal(t, 0, e.waiters())
}

// TestRunWaitBadInput rejects malformed waits before anything is written,
// and unknown runs with a 404.
func TestRunWaitBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	name, _ := e.register(`{"name":"badwait","nodes":[{"id":"a","handler":"noop"}]}`)
	for _, w := range []string{"abc", "-1s", "61s", "1h", "99999999999999999999", "1.5.s"} {
		p := e.must(req{method: "POST", path: "/workflows/" + name + "/runs?wait=" + w, malformed: true}, http.StatusBadRequest).problem(t)
		require.Contains(t, p.Detail, "wait=", w)
		p = e.must(req{method: "GET", path: "/runs/r-unknown?wait=" + w, malformed: true}, http.StatusBadRequest).problem(t)
		require.Contains(t, p.Detail, "wait=", w)
	}
	n, err := e.rdb.ZCard(t.Context(), e.keys.WorkflowRunShards(name)[0]).Result()
	require.NoError(t, err)
	require.Zero(t, n, "a rejected request starts no run")
	e.must(req{method: "GET", path: "/runs/r-unknown?wait=5s"}, http.StatusNotFound).problem(t)
	require.Equal(t, 0, e.waiters())
}

// TestRunWaitLimit refuses waiting requests past MaxWaiters with a 503 and
// Retry-After, without starting a run, and answers waiters when the api
// shuts down.
func TestRunWaitLimit(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{maxWaiters: 1, waitRecheck: time.Hour})
	name, _ := e.register(`{"name":"crowded","nodes":[{"id":"a","handler":"noop"}]}`)
	id := e.startRun(name, nil, nil)
	answer := e.client.send(t, req{method: "GET", path: "/runs/" + id + "?wait=60s"})
	e.waitForWaiters(1)
	resp := e.must(req{method: "POST", path: "/workflows/" + name + "/runs?wait=5s"}, http.StatusServiceUnavailable)
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.Contains(t, resp.problem(t).Detail, "waiting")
	e.must(req{method: "GET", path: "/runs/" + id + "?wait=5s"}, http.StatusServiceUnavailable)
	n, err := e.rdb.ZCard(t.Context(), e.keys.WorkflowRunShards(name)[0]).Result()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the refused request started no run")

	require.NoError(t, e.api.Close())
	require.Equal(t, "pending", answer.run(t, "the api shut down").Status)
}

// onlyRun waits for the one run of workflow name to be recorded and returns its id.
func (e *env) onlyRun(name string) string {
	e.t.Helper()
	var ids []string
	require.Eventually(e.t, func() bool {
		var err error
		ids, err = e.rdb.ZRange(e.t.Context(), e.keys.WorkflowRunShards(name)[0], 0, -1).Result()
		return err == nil && len(ids) == 1
	}, 30*time.Second, 5*time.Millisecond, "workflow %s: runs %v", name, ids)
	return ids[0]
}

// waiters reads the api's braid_api_waiting_requests gauge.
func (e *env) waiters() int {
	e.t.Helper()
	body := string(e.must(req{method: "GET", path: "/metrics", key: "-"}, http.StatusOK).Body)
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, "braid_api_waiting_requests "); ok {
			n, err := strconv.ParseFloat(v, 64)
			require.NoError(e.t, err, line)
			return int(n)
		}
	}
	e.t.Fatalf("no braid_api_waiting_requests in /metrics")
	return 0
}

// waitForWaiters waits until n requests wait for runs.
func (e *env) waitForWaiters(n int) {
	e.t.Helper()
	require.Eventually(e.t, func() bool { return e.waiters() == n }, 30*time.Second, 5*time.Millisecond,
		"expected %d waiting requests", n)
}

// waitSubscribed waits until Redis counts the api's subscription to the
// run-ended channel, so that announcements reach it.
func (e *env) waitSubscribed() {
	e.t.Helper()
	require.Eventually(e.t, func() bool {
		n, err := e.rdb.PubSubNumSub(e.t.Context(), e.keys.EndedChannel()).Result()
		return err == nil && n[e.keys.EndedChannel()] >= 1
	}, 30*time.Second, 5*time.Millisecond, "the api never subscribed to %s", e.keys.EndedChannel())
}

// endRun sets a run's status as the orchestrator would and announces it.
func (e *env) endRun(id, status string) {
	e.t.Helper()
	ctx := e.t.Context()
	require.NoError(e.t, e.rdb.HSet(ctx, e.keys.Run(id), records.FieldStatus, status).Err())
	require.NoError(e.t, e.rdb.Publish(ctx, e.keys.EndedChannel(), id).Err())
}
