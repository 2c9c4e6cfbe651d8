package orchsvc

import (
	"log/slog"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/stretchr/testify/require"
)

func TestPruneOwnedForgetsRunsWithoutLock(t *testing.T) {
	t.Parallel()
	s := &Service{
		cfg:    Config{IdleRelease: time.Second},
		owned:  map[string]*owned{"held": {}, "released": {}},
		leases: newLeases(nil, statestore.Keys{}, 6*time.Second, time.Second, slog.New(slog.DiscardHandler)),
	}
	s.leases.add("held", "v")
	now := time.Now()
	s.pruneOwned(now)
	require.Contains(t, s.owned, "held")
	require.NotContains(t, s.owned, "released")

	// Not again before IdleRelease has passed.
	s.owned["later"] = &owned{}
	s.pruneOwned(now.Add(500 * time.Millisecond))
	require.Contains(t, s.owned, "later")
	s.pruneOwned(now.Add(time.Second))
	require.NotContains(t, s.owned, "later")
	require.Contains(t, s.owned, "held")
}
