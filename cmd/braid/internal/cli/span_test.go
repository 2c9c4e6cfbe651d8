package cli

import (
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/stretchr/testify/require"
)

func TestSpan(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start.Add(5 * time.Second)
	at := apiwire.At
	require.Zero(t, span(apiwire.Time{}, apiwire.Time{}, now), "not started")
	require.Equal(t, 5*time.Second, span(at(start), apiwire.Time{}, now), "running: until now")
	require.Equal(t, 2*time.Second, span(at(start), at(start.Add(2*time.Second)), now), "ended")
	require.Zero(t, span(at(start), at(start.Add(-time.Second)), now), "clock skew is not negative")
}
