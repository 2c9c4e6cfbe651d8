package apisvc

import (
	"context"
	"strconv"
	"testing"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/stretchr/testify/require"
)

// TestLogTailFollowsATrimmedList appends to a list capped like a worker's
// log and checks the tail returns every line once, in order.
func TestLogTailFollowsATrimmedList(t *testing.T) {
	t.Parallel()
	rdb := testinfra.StartRedis(t).Client(t)
	ctx := context.Background()
	key := testinfra.UniqueName(t, "logs")
	const capLines = 5
	push := func(from, to int) {
		for i := from; i < to; i++ {
			require.NoError(t, rdb.RPush(ctx, key, "line-"+strconv.Itoa(i)).Err())
		}
		require.NoError(t, rdb.LTrim(ctx, key, -capLines, -1).Err())
	}
	tail := &logTail{key: key}
	var got []string
	read := func() {
		lines, err := tail.next(ctx, rdb)
		require.NoError(t, err)
		got = append(got, lines...)
	}
	read() // empty list
	push(0, 3)
	read()
	push(3, 5) // list full, nothing trimmed yet
	read()
	read()     // nothing new
	push(5, 8) // trims line-0..line-2
	read()
	push(8, 9)
	read()
	want := make([]string, 9)
	for i := range want {
		want[i] = "line-" + strconv.Itoa(i)
	}
	require.Equal(t, want, got)
	push(9, 30) // more than the cap between reads: older lines are lost, no repeats
	read()
	require.Equal(t, "line-29", got[len(got)-1])
	require.Len(t, got, 9+capLines)
}
