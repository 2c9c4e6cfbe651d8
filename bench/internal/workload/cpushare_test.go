package workload

import (
	"math"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCPUSharesPerNode: a group's CPU time since the start, per node, in
// µs; a group without a process is NaN, not 0.
func TestCPUSharesPerNode(t *testing.T) {
	t.Parallel()
	c := &cpuShares{t0: time.Now(), names: []string{"bench", "gone"},
		pids: map[string][]int{"bench": {os.Getpid()}}, at0: map[string]time.Duration{}}
	c.at0["bench"] = c.total("bench")
	spin := time.Now()
	x := 0
	for time.Since(spin) < 50*time.Millisecond { // CPU for the process to account
		x++
	}
	used := c.used()["bench"]
	got := c.perNode(10)
	require.Positive(t, x)
	require.Greater(t, got["bench"], 0.0)
	// The clock ticks at 10 ms: what perNode read lies between what used
	// read and one tick more.
	require.InDelta(t, float64(used.Microseconds())/10, got["bench"], float64(10*time.Millisecond/time.Microsecond)/10+1)
	require.True(t, math.IsNaN(got["gone"]))
}
