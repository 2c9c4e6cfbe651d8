package statestore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClaimCallsGroupByRunAndBound: a fetched batch's attempts go in one
// call per run, in order of first appearance, none longer than
// claimsPerCall (a call holds Redis for all of its attempts).
func TestClaimCallsGroupByRunAndBound(t *testing.T) {
	var reqs []ClaimRequest
	for i := range 70 {
		reqs = append(reqs, ClaimRequest{Attempt: Attempt{Run: "a", Node: "n", Instance: i, Attempt: 1}})
		if i == 3 {
			reqs = append(reqs, ClaimRequest{Attempt: Attempt{Run: "b", Node: "n", Attempt: 1}})
		}
	}
	calls := claimCalls(reqs)
	var sizes []int
	for _, c := range calls {
		sizes = append(sizes, len(c))
		for _, at := range c {
			require.Equal(t, reqs[c[0]].Attempt.Run, reqs[at].Attempt.Run, "a call mixes runs (and slots)")
		}
	}
	require.Equal(t, []int{claimsPerCall, 1, claimsPerCall, 70 - 2*claimsPerCall}, sizes)
	require.Equal(t, []int{0, 1, 2, 3, 5}, calls[0][:5], "a run's attempts keep their order")
	require.Equal(t, []int{4}, calls[1])
}
