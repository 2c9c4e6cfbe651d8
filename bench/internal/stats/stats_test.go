package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{name: "median of odd", xs: []float64{3, 1, 2}, p: 50, want: 2},
		{name: "p99 of 100 is the 99th", xs: seq(100), p: 99, want: 99},
		{name: "p99 of 1000", xs: seq(1000), p: 99, want: 990},
		{name: "p100 is the max", xs: seq(7), p: 100, want: 7},
		{name: "tiny p is the min", xs: seq(7), p: 0.001, want: 1},
		{name: "one sample", xs: []float64{4}, p: 99, want: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, Percentile(tt.xs, tt.p))
		})
	}
	require.True(t, math.IsNaN(Percentile(nil, 50)))
	xs := []float64{3, 1, 2}
	Percentile(xs, 50)
	require.Equal(t, []float64{3, 1, 2}, xs, "input must not be reordered")
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	require.Equal(t, Summary{Median: 2, Min: 1, Max: 9, N: 3}, Summarize([]float64{9, 1, 2}))
	require.Equal(t, Summary{Median: 2.5, Min: 1, Max: 4, N: 4}, Summarize([]float64{4, 3, 2, 1}))
	require.Equal(t, Summary{Median: 5, Min: 5, Max: 5, N: 1}, Summarize([]float64{math.NaN(), 5, math.Inf(1)}))
	require.Equal(t, Summary{}, Summarize(nil))
}

func TestDiffs(t *testing.T) {
	t.Parallel()
	require.Equal(t, []float64{1, 3}, Diffs([]float64{1, 2, 5}))
	require.Nil(t, Diffs([]float64{1}))
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}

// Pooling differs from the median of per-repetition percentiles: three
// repetitions of 99 gaps where one holds a slow tail.
func TestPooledPercentile(t *testing.T) {
	t.Parallel()
	fast := repeatN(1, 99)
	slow := append(repeatN(1, 90), repeatN(10, 9)...)
	sets := [][]float64{fast, fast, slow}
	got := PooledPercentile(sets, 99)
	// Per repetition the p99 (nearest rank, 99 samples: the max) is 1, 1
	// and 10; their median is 1. Pooled, 9 of 297 samples are 10: the p99
	// (rank 295) is 10.
	perRep := Summarize([]float64{Percentile(fast, 99), Percentile(fast, 99), Percentile(slow, 99)})
	require.Equal(t, 1.0, perRep.Median)
	require.Equal(t, Pooled{Value: 10, Min: 1, Max: 10, Samples: 297, SetMin: 99, SetMax: 99}, got)

	// p50 of the pool is the 149th of 297 sorted samples.
	require.Equal(t, 1.0, PooledPercentile(sets, 50).Value)
	require.Equal(t, 2.0, PooledPercentile([][]float64{{1, 2}, {3}}, 50).Value)

	empty := PooledPercentile(nil, 99)
	require.True(t, math.IsNaN(empty.Value))
	require.Zero(t, empty.Samples)
	withEmpty := PooledPercentile([][]float64{{}, {5, 7}}, 99)
	require.Equal(t, Pooled{Value: 7, Min: 7, Max: 7, Samples: 2, SetMin: 0, SetMax: 2}, withEmpty)
}

func repeatN(x float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = x
	}
	return out
}
