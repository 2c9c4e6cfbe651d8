package orchsvc

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/stretchr/testify/require"
)

func TestLeasesReleaseIdleAndRetiredLocksAndRefreshTheRest(t *testing.T) {
	t.Parallel()
	rdb := testinfra.StartRedis(t).Client(t)
	ctx := context.Background()
	keys := statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}
	l := newLeases(rdb, keys, time.Minute, 3*time.Second, slog.New(slog.DiscardHandler))
	now := time.Now()
	for _, run := range []string{"busy", "idle", "ended", "stolen"} {
		v := lockValue("orch-1")
		require.True(t, strings.HasSuffix(v, "orch-1"), "a lock names its holder")
		require.NoError(t, rdb.Set(ctx, keys.Lock(run), v, 10*time.Second).Err())
		l.add(run, v)
	}
	require.NotEqual(t, l.value("busy"), l.value("idle"), "every acquisition draws its own token")
	l.m["idle"].lastUsed = now.Add(-4 * time.Second)
	l.retire("ended")
	require.NoError(t, rdb.Set(ctx, keys.Lock("stolen"), "someone else", 10*time.Second).Err())

	l.maintain(ctx, now)

	require.True(t, l.held("busy"))
	require.Greater(t, rdb.PTTL(ctx, keys.Lock("busy")).Val(), 50*time.Second, "a used lock is refreshed")
	for _, run := range []string{"idle", "ended"} {
		require.False(t, l.held(run), run)
		require.Zero(t, rdb.Exists(ctx, keys.Lock(run)).Val(), "%s: released in Redis", run)
	}
	require.False(t, l.held("stolen"), "a lost lock is forgotten")
	require.Equal(t, "someone else", rdb.Get(ctx, keys.Lock("stolen")).Val(), "and left to its holder")

	l.releaseAll(ctx)
	require.False(t, l.held("busy"))
	require.Zero(t, rdb.Exists(ctx, keys.Lock("busy")).Val())
}
