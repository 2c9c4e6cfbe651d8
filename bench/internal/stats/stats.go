// Package stats holds the benchmarks' arithmetic: percentiles of samples
// and the median/min/max summary of repeated measurements. Pure functions.
package stats

import (
	"math"
	"slices"
)

// Percentile returns the p-th percentile (0 < p ≤ 100) of xs by the
// nearest-rank method (the smallest sample with at least p% of the samples
// at or below it); NaN when xs is empty. xs is not modified.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// Summary is a figure measured several times: the median and the extremes.
type Summary struct {
	Median, Min, Max float64
	// N is the number of measurements; 0 means the figure does not apply.
	N int
}

// Summarize returns the median, min and max of xs (the median of an even
// count is the mean of the middle two). NaN and infinite samples are
// dropped; no samples give a zero Summary (N 0).
func Summarize(xs []float64) Summary {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return Summary{}
	}
	slices.Sort(s)
	mid := len(s) / 2
	med := s[mid]
	if len(s)%2 == 0 {
		med = (s[mid-1] + s[mid]) / 2
	}
	return Summary{Median: med, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// Diffs returns the gaps between consecutive values of xs (len(xs)-1 of them).
func Diffs(xs []float64) []float64 {
	if len(xs) < 2 {
		return nil
	}
	out := make([]float64, len(xs)-1)
	for i := 1; i < len(xs); i++ {
		out[i-1] = xs[i] - xs[i-1]
	}
	return out
}
