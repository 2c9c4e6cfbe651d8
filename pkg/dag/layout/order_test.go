package layout

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// newGraph lays out parents up to the ordering, for white-box tests.
func newGraph(t *testing.T, parents [][]int) *graph {
	t.Helper()
	layer, err := layers(len(parents), parents)
	require.NoError(t, err)
	return build(len(parents), parents, layer)
}

func TestOrderRemovesTheFirstOrdersCrossings(t *testing.T) {
	t.Parallel()
	g := newGraph(t, [][]int{nil, nil, {0, 1}, {0}, {3}}) // as crossingGraph in layout_test.go
	require.Equal(t, 1, g.crossings(), "the depth-first order crosses 1→2 and 0→3")
	g.order(8)
	require.Zero(t, g.crossings())
	for l, row := range g.rows {
		for i, v := range row {
			require.Equal(t, i, g.pos[v], "layer %d: pos agrees with rows", l)
		}
	}
}

func TestCrossingsAgreesWithPairwiseCount(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 5))
	for range 50 {
		n := 2 + r.IntN(60)
		parents := make([][]int, n)
		for i := 1; i < n; i++ {
			for range r.IntN(4) {
				parents[i] = append(parents[i], r.IntN(i))
			}
		}
		g := newGraph(t, parents)
		require.Equal(t, pairwise(g), g.crossings())
		g.order(3)
		require.Equal(t, pairwise(g), g.crossings())
	}
}

// pairwise counts crossings by comparing every two edges between the same
// adjacent layers.
func pairwise(g *graph) int {
	type edge struct{ u, v int }
	byLayer := make([][]edge, len(g.rows))
	for u, vs := range g.down {
		for _, v := range vs {
			byLayer[g.layer[u]] = append(byLayer[g.layer[u]], edge{g.pos[u], g.pos[v]})
		}
	}
	n := 0
	for _, es := range byLayer {
		for i, a := range es {
			for _, b := range es[i+1:] {
				if (a.u < b.u && a.v > b.v) || (a.u > b.u && a.v < b.v) {
					n++
				}
			}
		}
	}
	return n
}
