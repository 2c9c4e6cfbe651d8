package statestore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

type bundle struct {
	ctx  context.Context
	rdb  *redis.Client
	keys statestore.Keys
}

func setup(t testing.TB) bundle {
	t.Helper()
	srv := testinfra.StartRedis(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	require.NoError(t, statestore.LoadScripts(ctx, rdb))
	return bundle{ctx: ctx, rdb: rdb, keys: statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}}
}

func (b bundle) putNode(t *testing.T, run, node string, rec records.NodeRecord) {
	t.Helper()
	require.NoError(t, b.rdb.HSet(b.ctx, b.keys.Nodes(run), node, rec.Encode()).Err())
}

func write(t *testing.T, b bundle, w statestore.RunWrite) int64 {
	t.Helper()
	pipe := b.rdb.Pipeline()
	cmd := b.keys.QueueWrite(b.ctx, pipe, w)
	_, err := pipe.Exec(b.ctx)
	require.NoError(t, err)
	return cmd.Val().(int64)
}

// lockRun takes run's lock for the holder "me" as the orchestrator's
// acquisition does (the lock set to a new value of the holder's, the fence
// bumped) and returns the fence and the value a write must carry.
func lockRun(t *testing.T, ctx context.Context, rdb redis.Cmdable, k statestore.Keys, run string) (int64, string) {
	t.Helper()
	value := statestore.NewLockValue("me")
	require.NoError(t, rdb.Set(ctx, k.Lock(run), value, time.Minute).Err())
	fence, err := rdb.Incr(ctx, k.Fence(run)).Result()
	require.NoError(t, err)
	return fence, value
}

func TestLargeWriteIsChunked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fence, lock := lockRun(t, b.ctx, b.rdb, b.keys, "big")
	nodes := make(map[string][]byte, 20000)
	for i := 0; i < 20000; i++ {
		nodes["n"+itoa(i)] = []byte(`{"s":"pending"}`)
	}
	require.EqualValues(t, statestore.WriteApplied, write(t, b, statestore.RunWrite{Run: "big", Fence: fence, Lock: lock, Create: true,
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
	fence, lock := lockRun(t, b.ctx, b.rdb, b.keys, "r1")
	ended := []statestore.Attempt{{Run: "r1", Node: "A", Attempt: 1}, {Run: "r1", Node: "F", Instance: 7, Attempt: 2}}
	running := statestore.Attempt{Run: "r1", Node: "B", Attempt: 1}
	for _, a := range append(ended, running) {
		require.NoError(t, b.rdb.Set(b.ctx, b.keys.Claim(a.Run, a.Node, a.Instance, a.Attempt), "w1", time.Minute).Err())
	}
	w := statestore.RunWrite{Run: "r1", Fence: fence, Lock: lock, Create: true,
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
	require.NoError(t, b.rdb.HSet(b.ctx, b.keys.Nodes("r1"), "A", `{"s":"queued","a":1}`, "BAD", `{not json`,
		"FO", `{"s":"running","fo":true}`).Err())
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Instances("r1", "FO"), "not a hash", 0).Err())
	reqs := []statestore.ClaimRequest{
		{Attempt: statestore.Attempt{Run: "r1", Node: "BAD", Attempt: 1}, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r1", Node: "A", Attempt: 1}, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r1", Node: "FO", Instance: 2, Attempt: 1}, TTL: time.Minute},
	}
	res, err := b.keys.ClaimAttempts(b.ctx, b.rdb, reqs, "w1")
	require.NoError(t, err)
	require.Equal(t, []statestore.ClaimResult{statestore.ClaimCorrupt, statestore.ClaimOK, statestore.ClaimCorrupt}, results(res))
	require.Contains(t, res[0].Problem, "r1")
	require.Empty(t, res[1].Problem)
	require.Contains(t, res[2].Problem, "WRONGTYPE")
	require.Equal(t, "w1", b.rdb.Get(b.ctx, b.keys.Claim("r1", "A", 0, 1)).Val())

	// A connection-level failure is still an error for the whole call.
	cancelled, cancel := context.WithCancel(b.ctx)
	cancel()
	_, err = b.keys.ClaimAttempts(cancelled, b.rdb, reqs, "w1")
	require.Error(t, err)
}

// TestClaimAttemptsAnswerAsClaimAttempt: claims grouped by run (claims, up to
// 32 a call, and a run's lone attempt through claim) answer every outcome
// exactly as ClaimAttempt does one by one on the same records — claimed,
// taken, ahead (missing record, earlier attempt), stale, finished, a fan-out
// instance's — in the order asked, across runs whose attempts interleave,
// and store the same claims.
func TestClaimAttemptsAnswerAsClaimAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	one := statestore.Keys{Namespace: b.keys.Namespace + "one:"}
	records := map[string]string{
		"Q": `{"s":"queued","a":2}`, "R": `{"s":"running","a":2}`, "S": `{"s":"succeeded","a":2}`,
		"L": `{"s":"queued","a":3}`, "E": `{"s":"queued","a":1}`, "F": `{"s":"running","fo":true}`,
	}
	var reqs []statestore.ClaimRequest
	for _, ks := range []statestore.Keys{b.keys, one} {
		for _, run := range []string{"r1", "r2"} {
			for node, rec := range records {
				require.NoError(t, b.rdb.HSet(b.ctx, ks.Nodes(run), node, rec).Err())
			}
			require.NoError(t, b.rdb.HSet(b.ctx, ks.Instances(run, "F"), statestore.InstanceField(0), `{"s":"queued","a":2}`).Err())
			require.NoError(t, b.rdb.Set(b.ctx, ks.Claim(run, "R", 0, 2), "w2", time.Minute).Err())
		}
	}
	// r1: 40 attempts (two calls of claims); r2: one (claim); interleaved.
	for i := range 40 {
		node := []string{"Q", "R", "S", "L", "E", "missing", "F"}[i%7]
		reqs = append(reqs, statestore.ClaimRequest{Attempt: statestore.Attempt{Run: "r1", Node: node, Instance: i / 7 % 2, Attempt: 2 + i/14}, TTL: time.Minute})
		if i == 20 {
			reqs = append(reqs, statestore.ClaimRequest{Attempt: statestore.Attempt{Run: "r2", Node: "Q", Attempt: 2}, TTL: time.Minute})
		}
	}
	got, err := b.keys.ClaimAttempts(b.ctx, b.rdb, reqs, "w1")
	require.NoError(t, err)
	require.Len(t, got, len(reqs))
	seen := map[statestore.ClaimResult]bool{}
	for i, r := range reqs {
		want, err := one.ClaimAttempt(b.ctx, b.rdb, r.Attempt, "w1", r.TTL)
		require.NoError(t, err)
		require.Equal(t, want, got[i].Result, "attempt %d: %s", i, r.Attempt)
		seen[want] = true
		a := r.Attempt
		require.Equal(t, b.rdb.Get(b.ctx, one.Claim(a.Run, a.Node, a.Instance, a.Attempt)).Val(),
			b.rdb.Get(b.ctx, b.keys.Claim(a.Run, a.Node, a.Instance, a.Attempt)).Val(), "claim key of %s", a)
	}
	for _, r := range []statestore.ClaimResult{statestore.ClaimOK, statestore.ClaimTaken, statestore.ClaimAhead, statestore.ClaimStale, statestore.ClaimFinished} {
		require.True(t, seen[r], "no attempt answered %s: the test lost a case", r)
	}
	// Asked again, every claim of w1 is its own.
	again, err := b.keys.ClaimAttempts(b.ctx, b.rdb, reqs, "w1")
	require.NoError(t, err)
	want := results(got)
	for i, r := range want {
		if r == statestore.ClaimOK {
			want[i] = statestore.ClaimMine
		}
	}
	require.Equal(t, want, results(again))
}

// TestWriteManyInCalls: the apply script deletes ended claims, clears
// outputs and appends history lines many to a call, 500 at a time; across
// those bounds every claim goes, every output is cleared, and the history
// keeps its order and its cap.
func TestWriteManyInCalls(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fence, lock := lockRun(t, b.ctx, b.rdb, b.keys, "r1")
	const n = 1201
	var ended []statestore.Attempt
	outputs := map[string][]byte{}
	for i := range n {
		a := statestore.Attempt{Run: "r1", Node: fmt.Sprintf("n%d", i), Attempt: 1}
		ended = append(ended, a)
		require.NoError(t, b.rdb.Set(b.ctx, b.keys.Claim(a.Run, a.Node, a.Instance, a.Attempt), "w1", time.Minute).Err())
		outputs[a.Node] = []byte(`1`)
	}
	first := statestore.RunWrite{Run: "r1", Fence: fence, Lock: lock, Create: true, Outputs: outputs}
	for i := range n {
		first.History = append(first.History, fmt.Sprintf("h%d", i))
	}
	require.EqualValues(t, statestore.WriteApplied, write(t, b, first))
	hist := b.rdb.LRange(b.ctx, b.keys.History("r1"), 0, -1).Val()
	require.Len(t, hist, statestore.HistoryCap, "the history keeps its cap")
	require.Equal(t, fmt.Sprintf("h%d", n-statestore.HistoryCap), hist[0])
	require.Equal(t, fmt.Sprintf("h%d", n-1), hist[len(hist)-1])
	for i := 1; i < len(hist); i++ {
		require.Equal(t, fmt.Sprintf("h%d", n-statestore.HistoryCap+i), hist[i], "history line %d out of order", i)
	}

	second := statestore.RunWrite{Run: "r1", Fence: fence, Lock: lock, Ended: ended}
	for node := range outputs {
		second.ClearOutputs = append(second.ClearOutputs, node)
	}
	require.EqualValues(t, statestore.WriteApplied, write(t, b, second))
	for _, a := range ended {
		require.Zero(t, b.rdb.Exists(b.ctx, b.keys.Claim(a.Run, a.Node, a.Instance, a.Attempt)).Val(), a.String())
	}
	require.Zero(t, b.rdb.HLen(b.ctx, b.keys.Outputs("r1")).Val(), "every output cleared")
}
