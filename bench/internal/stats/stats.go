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

// Pooled is a percentile over repeated sample sets: the p-th percentile of
// every sample of every set together, not a median of the sets'
// percentiles, with the spread of the sets next to it.
type Pooled struct {
	// Value is the nearest-rank p-th percentile of all samples pooled.
	Value float64
	// Min and Max are the lowest and highest of the per-set percentiles.
	Min, Max float64
	// Samples is the pooled sample count; SetMin and SetMax the smallest
	// and largest set.
	Samples, SetMin, SetMax int
}

// PooledPercentile returns the p-th percentile (nearest rank) of every
// sample of sets pooled, with the min and max of the per-set percentiles.
// Empty sets count in SetMin but have no percentile; no samples at all
// give a zero Pooled with Value NaN.
func PooledPercentile(sets [][]float64, p float64) Pooled {
	var all []float64
	out := Pooled{Value: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	for i, s := range sets {
		all = append(all, s...)
		if i == 0 || len(s) < out.SetMin {
			out.SetMin = len(s)
		}
		out.SetMax = max(out.SetMax, len(s))
		if len(s) == 0 {
			continue
		}
		x := Percentile(s, p)
		if math.IsNaN(out.Min) || x < out.Min {
			out.Min = x
		}
		if math.IsNaN(out.Max) || x > out.Max {
			out.Max = x
		}
	}
	out.Samples = len(all)
	if len(all) > 0 {
		out.Value = Percentile(all, p)
	}
	return out
}
