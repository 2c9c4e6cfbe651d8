package layout_test

import (
	"math/rand/v2"
	"testing"

	"github.com/braidhq/braid/pkg/dag/layout"
)

func benchmarkCompute(b *testing.B, parents [][]int) {
	for b.Loop() {
		if _, err := layout.Compute(len(parents), parents, layout.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompute1000: edges reaching up to 40 nodes back make about
// 13,000 dummies in 73 layers.
func BenchmarkCompute1000(b *testing.B) {
	benchmarkCompute(b, randomDAG(rand.New(rand.NewPCG(1, 2)), 1000))
}

// BenchmarkCompute1000Layered: 10 layers of 100, as BenchmarkCompute10000Layered.
func BenchmarkCompute1000Layered(b *testing.B) { benchmarkCompute(b, layered(1000)) }

// BenchmarkCompute10000Layered: 100 layers of 100, each node with one to
// three parents in the previous two layers (about 20,000 edges).
func BenchmarkCompute10000Layered(b *testing.B) { benchmarkCompute(b, layered(10000)) }

// BenchmarkCompute10000Tangled is a worst case: edges reaching up to 40
// nodes back make about a million dummies.
func BenchmarkCompute10000Tangled(b *testing.B) {
	benchmarkCompute(b, randomDAG(rand.New(rand.NewPCG(1, 2)), 10000))
}

// BenchmarkCompute10000FanOut: a root, 10,000 children, and their join.
func BenchmarkCompute10000FanOut(b *testing.B) { benchmarkCompute(b, fanOut(10000)) }

// layered is n nodes in layers of 100, each below the first with one to
// three parents in the previous two layers.
func layered(n int) [][]int {
	r := rand.New(rand.NewPCG(1, 2))
	parents := make([][]int, n)
	for i := 100; i < n; i++ {
		for range 1 + r.IntN(3) {
			parents[i] = append(parents[i], (i/100-1-r.IntN(min(2, i/100)))*100+r.IntN(100))
		}
	}
	return parents
}
