package orchsvc

import (
	"testing"
	"time"

	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/stretchr/testify/require"
)

func TestFenceMemoryTellsTakeovers(t *testing.T) {
	t.Parallel()
	m := fenceMemory{}
	now := time.Now()
	require.True(t, m.takeover("r", 5, now), "a run this process never held counts as taken over")
	require.False(t, m.takeover("r", 6, now), "our own next acquisition")
	require.True(t, m.takeover("r", 8, now), "someone held fence 7 in between")
	require.False(t, m.takeover("r", 9, now))

	m.prune(now.Add(core.RedispatchAfter / 2))
	require.Contains(t, m, "r")
	m.prune(now.Add(core.RedispatchAfter + time.Second))
	require.NotContains(t, m, "r")
	require.True(t, m.takeover("r", 10, now), "forgotten: counts as a takeover again")
}
