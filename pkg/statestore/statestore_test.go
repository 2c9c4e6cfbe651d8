package statestore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/runstate"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testinfra"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

type bundle struct {
	ctx  context.Context
	rdb  *redis.Client
	keys statestore.Keys
}

func setup(t *testing.T) bundle {
	t.Helper()
	srv := testinfra.StartRedis(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	require.NoError(t, statestore.LoadScripts(ctx, rdb))
	return bundle{ctx: ctx, rdb: rdb, keys: statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}}
}

func (b bundle) putNode(t *testing.T, run, node string, rec runstate.NodeRecord) {
	t.Helper()
	require.NoError(t, b.rdb.HSet(b.ctx, b.keys.Nodes(run), node, rec.Encode()).Err())
}

func TestClaimAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putNode(t, "r1", "A", runstate.NodeRecord{State: runstate.NodeQueued, Attempt: 2})
	a := statestore.Attempt{Run: "r1", Node: "A", Attempt: 2}
	tests := []struct {
		name   string
		a      statestore.Attempt
		worker string
		want   statestore.ClaimResult
	}{
		{"first claim wins", a, "w1", statestore.ClaimOK},
		{"same worker again is idempotent", a, "w1", statestore.ClaimOK},
		{"another worker is refused", a, "w2", statestore.ClaimTaken},
		{"stale attempt", statestore.Attempt{Run: "r1", Node: "A", Attempt: 1}, "w2", statestore.ClaimStale},
		{"unknown node", statestore.Attempt{Run: "r1", Node: "Z", Attempt: 1}, "w2", statestore.ClaimUnknown},
	}
	for _, tc := range tests { // sequential: each step builds on the last
		got, err := b.keys.ClaimAttempt(b.ctx, b.rdb, tc.a, tc.worker, time.Minute)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
	b.putNode(t, "r1", "A", runstate.NodeRecord{State: runstate.NodeCancelled, Attempt: 2})
	got, err := b.keys.Heartbeat(b.ctx, b.rdb, a, "w1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimFinished, got, "heartbeat must tell the worker to stop a cancelled attempt")
}

func TestClaimAttemptsInOnePipeline(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putNode(t, "r1", "A", runstate.NodeRecord{State: runstate.NodeQueued, Attempt: 1})
	b.putNode(t, "r1", "B", runstate.NodeRecord{State: runstate.NodeQueued, Attempt: 2})
	b.putNode(t, "r1", "C", runstate.NodeRecord{State: runstate.NodeSucceeded, Attempt: 1})
	b.putNode(t, "r1", "D", runstate.NodeRecord{State: runstate.NodeQueued, Attempt: 1})
	b.putNode(t, "r1", "F", runstate.NodeRecord{State: runstate.NodeRunning, FanOutCounts: runstate.FanOutCounts{FanOut: true}})
	inst := runstate.NodeRecord{State: runstate.NodeQueued, Attempt: 1}
	require.NoError(t, b.rdb.HSet(b.ctx, b.keys.Instances("r1", "F"), statestore.InstanceField(3), inst.Encode()).Err())
	taken := statestore.Attempt{Run: "r1", Node: "D", Attempt: 1}
	got, err := b.keys.ClaimAttempt(b.ctx, b.rdb, taken, "w2", time.Minute)
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimOK, got)

	reqs := []statestore.ClaimRequest{
		{Attempt: statestore.Attempt{Run: "r1", Node: "A", Attempt: 1}, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r1", Node: "B", Attempt: 1}, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r1", Node: "C", Attempt: 1}, TTL: time.Minute},
		{Attempt: taken, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r1", Node: "Z", Attempt: 1}, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r1", Node: "F", Instance: 3, Attempt: 1}, TTL: 30 * time.Second},
	}
	want := []statestore.ClaimResult{statestore.ClaimOK, statestore.ClaimStale, statestore.ClaimFinished,
		statestore.ClaimTaken, statestore.ClaimUnknown, statestore.ClaimOK}
	res, err := b.keys.ClaimAttempts(b.ctx, b.rdb, reqs, "w1")
	require.NoError(t, err)
	require.Equal(t, want, results(res))
	require.Equal(t, "w1", b.rdb.Get(b.ctx, b.keys.Claim("r1", "F", 3, 1)).Val())
	ttl := b.rdb.PTTL(b.ctx, b.keys.Claim("r1", "F", 3, 1)).Val()
	require.Greater(t, ttl, 20*time.Second)
	require.LessOrEqual(t, ttl, 30*time.Second, "each claim gets its own TTL")

	// Repeating the call (a retry after a lost answer) changes nothing, and a
	// server that lost its scripts gets them back within the call.
	require.NoError(t, b.rdb.ScriptFlush(b.ctx).Err())
	res, err = b.keys.ClaimAttempts(b.ctx, b.rdb, reqs, "w1")
	require.NoError(t, err)
	require.Equal(t, want, results(res))
	require.Equal(t, "w2", b.rdb.Get(b.ctx, b.keys.Claim("r1", "D", 0, 1)).Val())

	res, err = b.keys.ClaimAttempts(b.ctx, b.rdb, nil, "w1")
	require.NoError(t, err)
	require.Empty(t, res)
}

func TestHeartbeatRetakesExpiredClaim(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putNode(t, "r1", "A", runstate.NodeRecord{State: runstate.NodeRunning, Attempt: 1})
	a := statestore.Attempt{Run: "r1", Node: "A", Attempt: 1}
	got, err := b.keys.ClaimAttempt(b.ctx, b.rdb, a, "w1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimOK, got)
	require.NoError(t, b.rdb.Del(b.ctx, b.keys.Claim("r1", "A", 0, 1)).Err()) // as if it expired
	got, err = b.keys.Heartbeat(b.ctx, b.rdb, a, "w1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimOK, got)
	ttl, err := b.rdb.PTTL(b.ctx, b.keys.Claim("r1", "A", 0, 1)).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 30*time.Second)
	got, err = b.keys.Heartbeat(b.ctx, b.rdb, a, "w2", time.Minute)
	require.NoError(t, err)
	require.Equal(t, statestore.ClaimTaken, got)
	require.NoError(t, b.keys.ReleaseClaim(b.ctx, b.rdb, a, "w2")) // not w2's: no-op
	require.Equal(t, int64(1), b.rdb.Exists(b.ctx, b.keys.Claim("r1", "A", 0, 1)).Val())
	require.NoError(t, b.keys.ReleaseClaim(b.ctx, b.rdb, a, "w1"))
	require.Equal(t, int64(0), b.rdb.Exists(b.ctx, b.keys.Claim("r1", "A", 0, 1)).Val())
}

func write(t *testing.T, b bundle, w statestore.RunWrite) int64 {
	t.Helper()
	pipe := b.rdb.Pipeline()
	cmd := b.keys.QueueWrite(b.ctx, pipe, w)
	_, err := pipe.Exec(b.ctx)
	require.NoError(t, err)
	return cmd.Val().(int64)
}

func TestFencedWrite(t *testing.T) {
	t.Parallel()
	b := setup(t)
	old := b.rdb.Incr(b.ctx, b.keys.Fence("r1")).Val()
	w := statestore.RunWrite{Run: "r1", Fence: old, Create: true,
		RunFields: map[string]string{statestore.FieldStatus: "running"},
		Nodes:     map[string][]byte{"A": []byte(`{"s":"queued","a":1}`)},
		Outputs:   map[string][]byte{"A": []byte(`1`)}, History: []string{"h1"}}
	require.EqualValues(t, statestore.WriteApplied, write(t, b, w))
	require.EqualValues(t, statestore.WriteExists, write(t, b, w), "a second create is refused")

	newer := b.rdb.Incr(b.ctx, b.keys.Fence("r1")).Val() // another holder took the lock
	w.Create, w.RunFields = false, map[string]string{statestore.FieldStatus: "failed"}
	require.EqualValues(t, statestore.WriteStale, write(t, b, w), "the stale holder is fenced off")
	require.Equal(t, "running", b.rdb.HGet(b.ctx, b.keys.Run("r1"), statestore.FieldStatus).Val())

	w.Fence, w.ClearOutputs = newer, []string{"A"}
	require.EqualValues(t, statestore.WriteApplied, write(t, b, w))
	st, err := b.keys.LoadRun(b.ctx, b.rdb, "r1")
	require.NoError(t, err)
	require.Equal(t, "failed", st.Fields[statestore.FieldStatus])
	require.Empty(t, st.Outputs)
	require.Equal(t, int64(2), b.rdb.LLen(b.ctx, b.keys.History("r1")).Val())
}

func TestLargeWriteIsChunked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fence := b.rdb.Incr(b.ctx, b.keys.Fence("big")).Val()
	nodes := make(map[string][]byte, 20000)
	for i := 0; i < 20000; i++ {
		nodes["n"+itoa(i)] = []byte(`{"s":"pending"}`)
	}
	require.EqualValues(t, statestore.WriteApplied, write(t, b, statestore.RunWrite{Run: "big", Fence: fence, Create: true,
		RunFields: map[string]string{"status": "running"}, Nodes: nodes}))
	require.Equal(t, int64(20000), b.rdb.HLen(b.ctx, b.keys.Nodes("big")).Val())
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestWorkflowVersions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	now := time.Now()
	v1, err := b.keys.PutWorkflow(b.ctx, b.rdb, "wf", []byte(`{"v":1}`), now)
	require.NoError(t, err)
	v2, err := b.keys.PutWorkflow(b.ctx, b.rdb, "wf", []byte(`{"v":2}`), now)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, []int{v1, v2})
	def, v, err := b.keys.GetWorkflow(b.ctx, b.rdb, "wf", 0)
	require.NoError(t, err)
	require.Equal(t, 2, v)
	require.JSONEq(t, `{"v":2}`, string(def))
	def, _, err = b.keys.GetWorkflow(b.ctx, b.rdb, "wf", 1)
	require.NoError(t, err)
	require.JSONEq(t, `{"v":1}`, string(def))
	_, _, err = b.keys.GetWorkflow(b.ctx, b.rdb, "nope", 0)
	require.ErrorIs(t, err, statestore.ErrNotFound)
	_, _, err = b.keys.GetWorkflow(b.ctx, b.rdb, "wf", 9)
	require.ErrorIs(t, err, statestore.ErrNotFound)
}

func TestTimerMemberRoundTrip(t *testing.T) {
	t.Parallel()
	tm := statestore.Timer{Run: "r-1", Kind: 2, Node: "n_1", Instance: 3, Attempt: 4}
	got, err := statestore.ParseTimer(tm.Member())
	require.NoError(t, err)
	require.Equal(t, tm, got)
	for _, bad := range []string{"", "a|b", "r|x|n|0|1", "|1|n|0|1"} {
		_, err := statestore.ParseTimer(bad)
		require.Error(t, err, bad)
	}
}

func TestIsNoScript(t *testing.T) {
	t.Parallel()
	srv := testinfra.StartRedis(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	pipe := rdb.Pipeline()
	k := statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}
	k.QueueWrite(ctx, pipe, statestore.RunWrite{Run: "r1", Fence: 1})
	require.NoError(t, rdb.ScriptFlush(ctx).Err())
	_, err := pipe.Exec(ctx)
	require.True(t, statestore.IsNoScript(fmt.Errorf("persist: %w", err)), "%v", err)
	require.False(t, statestore.IsNoScript(errors.New("NOSCRIPT but not from redis")))
	require.False(t, statestore.IsNoScript(nil))
}

func TestWriteDeletesClaimsOfEndedAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fence := b.rdb.Incr(b.ctx, b.keys.Fence("r1")).Val()
	ended := []statestore.Attempt{{Run: "r1", Node: "A", Attempt: 1}, {Run: "r1", Node: "F", Instance: 7, Attempt: 2}}
	running := statestore.Attempt{Run: "r1", Node: "B", Attempt: 1}
	for _, a := range append(ended, running) {
		require.NoError(t, b.rdb.Set(b.ctx, b.keys.Claim(a.Run, a.Node, a.Instance, a.Attempt), "w1", time.Minute).Err())
	}
	w := statestore.RunWrite{Run: "r1", Fence: fence, Create: true,
		Nodes:   map[string][]byte{"A": []byte(`{"s":"succeeded","a":1}`), "B": []byte(`{"s":"running","a":1}`)},
		FanOuts: []statestore.FanOutWrite{{Node: "F", Instances: map[int][]byte{7: []byte(`{"s":"failed","a":2}`)}}},
		Ended:   ended}
	require.EqualValues(t, statestore.WriteApplied, write(t, b, w))
	for _, a := range ended {
		require.Zero(t, b.rdb.Exists(b.ctx, b.keys.Claim(a.Run, a.Node, a.Instance, a.Attempt)).Val(), a.String())
	}
	require.Equal(t, "w1", b.rdb.Get(b.ctx, b.keys.Claim("r1", "B", 0, 1)).Val(), "a claim in flight stays")
	require.Equal(t, `{"s":"failed","a":2}`, b.rdb.HGet(b.ctx, b.keys.Instances("r1", "F"), statestore.InstanceField(7)).Val())

	// A stale writer deletes nothing either.
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Claim("r1", "A", 0, 1), "w1", time.Minute).Err())
	b.rdb.Incr(b.ctx, b.keys.Fence("r1"))
	w.Create = false
	require.EqualValues(t, statestore.WriteStale, write(t, b, w))
	require.Equal(t, int64(1), b.rdb.Exists(b.ctx, b.keys.Claim("r1", "A", 0, 1)).Val())
}

// results lists the outcomes of ClaimAttempts' answers.
func results(cs []statestore.Claimed) []statestore.ClaimResult {
	out := make([]statestore.ClaimResult, len(cs))
	for i, c := range cs {
		out[i] = c.Result
	}
	return out
}

// TestClaimAttemptsIsolatesCorruptRecords: an attempt whose node record
// cannot be decoded, or whose instances key has the wrong type, answers
// ClaimCorrupt with the script's error, while the rest of the batch is
// claimed as usual (the call used to fail as a whole, for ever).
func TestClaimAttemptsIsolatesCorruptRecords(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, b.rdb.HSet(b.ctx, b.keys.Nodes("r1"), "A", `{"s":"queued","a":1}`, "BAD", `{not json`).Err())
	reqs := []statestore.ClaimRequest{
		{Attempt: statestore.Attempt{Run: "r1", Node: "BAD", Attempt: 1}, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r1", Node: "A", Attempt: 1}, TTL: time.Minute},
	}
	res, err := b.keys.ClaimAttempts(b.ctx, b.rdb, reqs, "w1")
	require.NoError(t, err)
	require.Equal(t, []statestore.ClaimResult{statestore.ClaimCorrupt, statestore.ClaimOK}, results(res))
	require.Contains(t, res[0].Problem, "r1")
	require.Empty(t, res[1].Problem)
	require.Equal(t, "w1", b.rdb.Get(b.ctx, b.keys.Claim("r1", "A", 0, 1)).Val())

	// A connection-level failure is still an error for the whole call.
	cancelled, cancel := context.WithCancel(b.ctx)
	cancel()
	_, err = b.keys.ClaimAttempts(cancelled, b.rdb, reqs, "w1")
	require.Error(t, err)
}
