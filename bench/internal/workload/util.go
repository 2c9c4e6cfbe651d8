package workload

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"time"
)

// uniqueTag is 6 random hex digits, for topic prefixes and namespaces.
func uniqueTag() (string, error) {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random tag: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// ratios divides each of xs by d (NaN when d is not positive).
func ratios(xs []float64, d float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if d > 0 {
			out[i] = x / d
		} else {
			out[i] = nanF()
		}
	}
	return out
}

// nanF is NaN: a figure that could not be read (dropped from summaries).
func nanF() float64 { return math.NaN() }

// pollEvery is the interval of the workloads' procstack.Poll loops.
const pollEvery = 20 * time.Millisecond
