package statestoretest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// testAdmission: a workflow with cap N has at most N admitted runs;
// waiting runs are admitted from the head of the queue only (request
// order, whatever order they ask in); admitting an admitted run again
// answers yes without taking a second slot; a release frees exactly one
// slot and names the runs the free slots now admit.
func testAdmission(t *testing.T, e env) {
	const wf, capacity = "wf", 2
	admit := func(run string, score int64) bool {
		ok, err := e.keys.Admit(e.ctx, e.rdb, wf, run, capacity, score)
		require.NoError(t, err)
		return ok
	}
	admitted := func() []string {
		ids, err := e.keys.Admitted(e.ctx, e.rdb, wf)
		require.NoError(t, err)
		return ids
	}
	require.True(t, admit("r1", 1))
	require.True(t, admit("r2", 2))
	require.False(t, admit("r4", 4), "no slot left")
	require.False(t, admit("r3", 3))
	require.True(t, admit("r1", 1), "an admitted run asking again")
	require.ElementsMatch(t, []string{"r1", "r2"}, admitted(), "a replay took no second slot")

	next, err := e.keys.Admissible(e.ctx, e.rdb, wf, capacity)
	require.NoError(t, err)
	require.Empty(t, next)
	next, err = e.keys.Release(e.ctx, e.rdb, wf, "r1", capacity)
	require.NoError(t, err)
	require.Equal(t, []string{"r3"}, next, "one slot frees the head of the queue, by request time")
	require.False(t, admit("r4", 4), "not the head: waits behind r3")
	require.True(t, admit("r3", 3))
	require.ElementsMatch(t, []string{"r2", "r3"}, admitted())

	next, err = e.keys.Release(e.ctx, e.rdb, wf, "r1", capacity)
	require.NoError(t, err)
	require.Empty(t, next, "releasing a released run frees nothing")
	require.ElementsMatch(t, []string{"r2", "r3"}, admitted())
}
