package statestore_test

import (
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/stretchr/testify/require"
)

// TestClaimFactsTellLiveFromOrphaned: a claim counts as live only while
// its holder's incarnation is the one alive under its worker id.
func TestClaimFactsTellLiveFromOrphaned(t *testing.T) {
	t.Parallel()
	b := setup(t)
	atts := []statestore.Attempt{
		{Run: "r1", Node: "live", Attempt: 1},
		{Run: "r1", Node: "restarted", Attempt: 1},
		{Run: "r1", Node: "gone", Attempt: 2},
		{Run: "r1", Node: "none", Attempt: 1},
		{Run: "r1", Node: "F", Instance: 3, Attempt: 1},
	}
	claim := func(a statestore.Attempt, holder string) {
		require.NoError(t, b.rdb.Set(b.ctx, b.keys.Claim(a.Run, a.Node, a.Instance, a.Attempt), holder, time.Minute).Err())
	}
	claim(atts[0], "inc2/w1")
	claim(atts[1], "inc1/w1") // w1's previous incarnation
	claim(atts[2], "inc9/w2") // w2's liveness lapsed
	claim(atts[4], "inc2/w1")
	prev, err := b.keys.RenewLiveness(b.ctx, b.rdb, "w1", "inc1", time.Minute)
	require.NoError(t, err)
	require.Empty(t, prev)
	prev, err = b.keys.RenewLiveness(b.ctx, b.rdb, "w1", "inc2", time.Minute) // w1 restarted
	require.NoError(t, err)
	require.Equal(t, "inc1", prev)

	facts, err := b.keys.ClaimFacts(b.ctx, b.rdb, atts)
	require.NoError(t, err)
	states := make([]statestore.ClaimState, len(facts))
	for i, f := range facts {
		states[i] = f.State
	}
	require.Equal(t, []statestore.ClaimState{statestore.ClaimLive, statestore.ClaimOrphaned, statestore.ClaimOrphaned,
		statestore.ClaimNone, statestore.ClaimLive}, states)
	require.Equal(t, records.Holder{Incarnation: "inc1", Worker: "w1"}, facts[1].Holder)
	require.Equal(t, "inc9/w2", facts[2].Raw)
}

// TestWriteDeletesOrphanedClaimsOfItsHolderOnly: the write that declares
// an attempt lost deletes its claim only if the dead holder still has it,
// so the new dispatch can be claimed and a live claimant is left alone.
func TestWriteDeletesOrphanedClaimsOfItsHolderOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fence, lock := lockRun(t, b.ctx, b.rdb, b.keys, "r1")
	dead := statestore.Attempt{Run: "r1", Node: "A", Attempt: 1}
	retaken := statestore.Attempt{Run: "r1", Node: "F", Instance: 2, Attempt: 1}
	ended := statestore.Attempt{Run: "r1", Node: "B", Attempt: 3}
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Claim("r1", "A", 0, 1), "old/w1", time.Minute).Err())
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Claim("r1", "F", 2, 1), "new/w3", time.Minute).Err())
	require.NoError(t, b.rdb.Set(b.ctx, b.keys.Claim("r1", "B", 0, 3), "x/w2", time.Minute).Err())
	w := statestore.RunWrite{Run: "r1", Fence: fence, Lock: lock, Create: true,
		Nodes:   map[string][]byte{"A": []byte(`{"s":"queued","a":1,"l":1}`)},
		Ended:   []statestore.Attempt{ended},
		Orphans: []statestore.OrphanedClaim{{Attempt: dead, Holder: "old/w1"}, {Attempt: retaken, Holder: "old/w2"}}}
	require.EqualValues(t, statestore.WriteApplied, write(t, b, w))
	require.Zero(t, b.rdb.Exists(b.ctx, b.keys.Claim("r1", "A", 0, 1)).Val(), "the dead holder's claim is gone")
	require.Zero(t, b.rdb.Exists(b.ctx, b.keys.Claim("r1", "B", 0, 3)).Val(), "ended attempts' claims still go")
	require.Equal(t, "new/w3", b.rdb.Get(b.ctx, b.keys.Claim("r1", "F", 2, 1)).Val(), "a live claimant keeps its claim")
}
