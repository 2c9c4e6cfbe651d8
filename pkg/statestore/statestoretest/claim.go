package statestoretest

import (
	"fmt"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/stretchr/testify/require"
)

// putNode stores rec as node's record in run.
func (e env) putNode(t *testing.T, run, node string, rec records.NodeRecord) {
	t.Helper()
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Nodes(run), node, rec.Encode()).Err())
}

// claimOne claims a single attempt through the worker's batch call.
func (e env) claimOne(t *testing.T, a statestore.Attempt, worker string) statestore.ClaimResult {
	t.Helper()
	res, err := e.store.ClaimAttempts(e.ctx, []statestore.ClaimRequest{{Attempt: a, TTL: time.Minute}}, worker)
	require.NoError(t, err)
	require.Len(t, res, 1)
	return res[0].Result
}

// testClaimGrantedToOneHolder: an attempt is claimed by one worker only;
// the holder's replay answers ok again (a lost answer is retried), and a
// claim for an attempt that is not current or not in flight is refused, so
// a redelivered dispatch never runs a finished node again; one for an
// attempt no record names yet answers ahead (its write may be on the way).
func testClaimGrantedToOneHolder(t *testing.T, e env) {
	e.putNode(t, "r1", "A", records.NodeRecord{State: records.NodeQueued, Attempt: 2})
	e.putNode(t, "r1", "done", records.NodeRecord{State: records.NodeSucceeded, Attempt: 1})
	a := statestore.Attempt{Run: "r1", Node: "A", Attempt: 2}
	tests := []struct {
		name   string
		a      statestore.Attempt
		worker string
		want   statestore.ClaimResult
	}{
		{"first claim wins", a, "w1", statestore.ClaimOK},
		{"same worker again finds its own claim", a, "w1", statestore.ClaimMine},
		{"another worker is refused", a, "w2", statestore.ClaimTaken},
		{"stale attempt", statestore.Attempt{Run: "r1", Node: "A", Attempt: 1}, "w2", statestore.ClaimStale},
		{"finished node", statestore.Attempt{Run: "r1", Node: "done", Attempt: 1}, "w2", statestore.ClaimFinished},
		{"unknown node", statestore.Attempt{Run: "r1", Node: "Z", Attempt: 1}, "w2", statestore.ClaimAhead},
		{"attempt not stored yet", statestore.Attempt{Run: "r1", Node: "A", Attempt: 3}, "w2", statestore.ClaimAhead},
	}
	for _, tc := range tests { // sequential: each step builds on the last
		require.Equal(t, tc.want, e.claimOne(t, tc.a, tc.worker), tc.name)
	}
	require.Equal(t, "w1", e.rdb.Get(e.ctx, e.keys.Claim("r1", "A", 0, 2)).Val(), "the refused claims changed nothing")
	require.Zero(t, e.rdb.Exists(e.ctx, e.keys.Claim("r1", "done", 0, 1)).Val())
	require.Zero(t, e.rdb.Exists(e.ctx, e.keys.Claim("r1", "A", 0, 3)).Val(), "a claim ahead of its record stores nothing")
}

// testClaimBatch: a batch claims each attempt exactly as a single claim
// would (each with its own TTL, a fan-out instance against its own record),
// and replaying the batch answers the same — its claims now this worker's
// own (mine) — and changes nothing.
func testClaimBatch(t *testing.T, e env) {
	e.putNode(t, "r1", "A", records.NodeRecord{State: records.NodeQueued, Attempt: 1})
	e.putNode(t, "r1", "B", records.NodeRecord{State: records.NodeQueued, Attempt: 2})
	e.putNode(t, "r1", "C", records.NodeRecord{State: records.NodeSucceeded, Attempt: 1})
	e.putNode(t, "r1", "D", records.NodeRecord{State: records.NodeQueued, Attempt: 1})
	e.putNode(t, "r1", "F", records.NodeRecord{State: records.NodeRunning, FanOutCounts: records.FanOutCounts{FanOut: true}})
	inst := records.NodeRecord{State: records.NodeQueued, Attempt: 1}
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Instances("r1", "F"), statestore.InstanceField(3), inst.Encode()).Err())
	e.putNode(t, "r2", "A", records.NodeRecord{State: records.NodeSucceeded, Attempt: 1})
	e.putNode(t, "r2", "B", records.NodeRecord{State: records.NodeQueued, Attempt: 1})
	taken := statestore.Attempt{Run: "r1", Node: "D", Attempt: 1}
	require.Equal(t, statestore.ClaimOK, e.claimOne(t, taken, "w2"))

	// Two runs interleaved: each answer is its own attempt's, in order.
	reqs := []statestore.ClaimRequest{
		{Attempt: statestore.Attempt{Run: "r1", Node: "A", Attempt: 1}, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r2", Node: "A", Attempt: 1}, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r1", Node: "B", Attempt: 1}, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r1", Node: "C", Attempt: 1}, TTL: time.Minute},
		{Attempt: taken, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r2", Node: "B", Attempt: 1}, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r1", Node: "Z", Attempt: 1}, TTL: time.Minute},
		{Attempt: statestore.Attempt{Run: "r1", Node: "F", Instance: 3, Attempt: 1}, TTL: 30 * time.Second},
	}
	want := []statestore.ClaimResult{statestore.ClaimOK, statestore.ClaimFinished, statestore.ClaimStale,
		statestore.ClaimFinished, statestore.ClaimTaken, statestore.ClaimOK, statestore.ClaimAhead, statestore.ClaimOK}
	for replay := range 2 {
		res, err := e.store.ClaimAttempts(e.ctx, reqs, "w1")
		require.NoError(t, err)
		require.Equal(t, want, results(res), "replay %d", replay)
		for i, r := range want { // the replay finds its own claims
			if r == statestore.ClaimOK {
				want[i] = statestore.ClaimMine
			}
		}
		require.Equal(t, "w1", e.rdb.Get(e.ctx, e.keys.Claim("r1", "F", 3, 1)).Val())
		require.Equal(t, "w1", e.rdb.Get(e.ctx, e.keys.Claim("r2", "B", 0, 1)).Val())
		require.Equal(t, "w2", e.rdb.Get(e.ctx, e.keys.Claim("r1", "D", 0, 1)).Val())
	}
	// Many runs in one batch, every other attempt stale.
	var many []statestore.ClaimRequest
	for i := range 20 {
		run := fmt.Sprintf("m%d", i%10)
		node := fmt.Sprintf("N%d", i)
		e.putNode(t, run, node, records.NodeRecord{State: records.NodeQueued, Attempt: 1 + i%2})
		many = append(many, statestore.ClaimRequest{Attempt: statestore.Attempt{Run: run, Node: node, Attempt: 1}, TTL: time.Minute})
	}
	res, err := e.store.ClaimAttempts(e.ctx, many, "w1")
	require.NoError(t, err)
	for i, c := range res {
		want := statestore.ClaimOK
		if i%2 == 1 {
			want = statestore.ClaimStale
		}
		require.Equal(t, want, c.Result, "request %d", i)
	}
	ttl := e.rdb.PTTL(e.ctx, e.keys.Claim("r1", "F", 3, 1)).Val()
	require.Greater(t, ttl, 20*time.Second)
	require.LessOrEqual(t, ttl, 30*time.Second, "each claim gets its own TTL")
	res, err = e.store.ClaimAttempts(e.ctx, nil, "w1")
	require.NoError(t, err)
	require.Empty(t, res)
}

// testHeartbeatAndRelease: a heartbeat keeps the holder's claim (taking it
// again if it expired while the attempt is current), refuses anyone else,
// and tells the holder to stop once the attempt is no longer in flight; a
// release deletes only the caller's own claim.
func testHeartbeatAndRelease(t *testing.T, e env) {
	e.putNode(t, "r1", "A", records.NodeRecord{State: records.NodeRunning, Attempt: 1})
	a := statestore.Attempt{Run: "r1", Node: "A", Attempt: 1}
	claim := e.keys.Claim("r1", "A", 0, 1)
	require.Equal(t, statestore.ClaimOK, e.claimOne(t, a, "w1"))
	require.NoError(t, e.rdb.Del(e.ctx, claim).Err()) // as if it expired
	beat := func(worker string) statestore.ClaimResult {
		got, err := e.store.Heartbeat(e.ctx, a, worker, time.Minute)
		require.NoError(t, err)
		return got
	}
	require.Equal(t, statestore.ClaimOK, beat("w1"))
	require.Greater(t, e.rdb.PTTL(e.ctx, claim).Val(), 30*time.Second)
	require.Equal(t, statestore.ClaimTaken, beat("w2"))

	require.NoError(t, e.store.ReleaseClaim(e.ctx, a, "w2")) // not w2's: no-op
	require.Equal(t, "w1", e.rdb.Get(e.ctx, claim).Val())
	require.NoError(t, e.store.ReleaseClaim(e.ctx, a, "w1"))
	require.Zero(t, e.rdb.Exists(e.ctx, claim).Val())

	e.putNode(t, "r1", "A", records.NodeRecord{State: records.NodeRunning, Attempt: 2})
	require.Equal(t, statestore.ClaimStale, beat("w1"), "heartbeat must stop an attempt the node has moved past")
	e.putNode(t, "r1", "A", records.NodeRecord{State: records.NodeCancelled, Attempt: 1})
	require.Equal(t, statestore.ClaimFinished, beat("w1"), "heartbeat must tell the worker to stop a cancelled attempt")
	require.NoError(t, e.rdb.HDel(e.ctx, e.keys.Nodes("r1"), "A").Err())
	require.Equal(t, statestore.ClaimUnknown, beat("w1"), "a heartbeat whose record is gone (run deleted) stops; only a claim waits for its record")
}

// results returns the outcomes of cs.
func results(cs []statestore.Claimed) []statestore.ClaimResult {
	out := make([]statestore.ClaimResult, len(cs))
	for i, c := range cs {
		out[i] = c.Result
	}
	return out
}
