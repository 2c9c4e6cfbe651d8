package layout_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/braidhq/braid/pkg/dag/layout"
	"github.com/stretchr/testify/require"
)

var opts = layout.Options{NodeWidth: 100, NodeHeight: 30, LayerGap: 50, NodeGap: 10}

func TestComputeShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		parents [][]int
		layers  []int
	}{
		{name: "empty", parents: [][]int{}, layers: []int{}},
		{name: "single", parents: [][]int{nil}, layers: []int{0}},
		{name: "chain", parents: [][]int{nil, {0}, {1}, {2}}, layers: []int{0, 1, 2, 3}},
		{name: "diamond", parents: [][]int{nil, {0}, {0}, {1, 2}}, layers: []int{0, 1, 1, 2}},
		{name: "long edge", parents: [][]int{nil, {0}, {1}, {2}, {0, 3}}, layers: []int{0, 1, 2, 3, 4}},
		{name: "two roots", parents: [][]int{nil, nil, {0, 1}}, layers: []int{0, 0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, err := layout.Compute(len(tc.parents), tc.parents, opts)
			require.NoError(t, err)
			got := make([]int, len(l.Nodes))
			for i, n := range l.Nodes {
				got[i] = n.Layer
			}
			require.Equal(t, tc.layers, got)
			requireValid(t, tc.parents, l)
		})
	}
}

func TestChainIsStraight(t *testing.T) {
	t.Parallel()
	l, err := layout.Compute(4, [][]int{nil, {0}, {1}, {2}}, opts)
	require.NoError(t, err)
	for _, n := range l.Nodes {
		require.Equal(t, l.Nodes[0].Y, n.Y, "a chain draws as a straight line")
	}
}

func TestFanOutCentresItsEnds(t *testing.T) {
	t.Parallel()
	const width = 100
	parents := make([][]int, width+2)
	for i := 1; i <= width; i++ {
		parents[i] = []int{0}
		parents[width+1] = append(parents[width+1], i)
	}
	l, err := layout.Compute(len(parents), parents, opts)
	require.NoError(t, err)
	requireValid(t, parents, l)
	mid := l.Height / 2
	require.InDelta(t, mid, l.Nodes[0].Y+opts.NodeHeight/2, opts.NodeHeight, "the root sits in the middle of its fan")
	require.InDelta(t, mid, l.Nodes[width+1].Y+opts.NodeHeight/2, opts.NodeHeight, "so does the join")
}

func TestLongEdgeRoutesAroundNodes(t *testing.T) {
	t.Parallel()
	parents := [][]int{nil, {0}, {1}, {2}, {0, 3}}
	l, err := layout.Compute(len(parents), parents, opts)
	require.NoError(t, err)
	var long *layout.Edge
	for i := range l.Edges {
		if l.Edges[i].From == 0 && l.Edges[i].To == 4 {
			long = &l.Edges[i]
		}
	}
	require.NotNil(t, long)
	require.Len(t, long.Points, 2+2*3, "two points in each of the three layers crossed")
	requireValid(t, parents, l)
}

func TestOrderingRemovesCrossings(t *testing.T) {
	t.Parallel()
	// Roots 0 and 1; their children given interleaved: 2←0, 3←1, 4←0, 5←1.
	parents := [][]int{nil, nil, {0}, {1}, {0}, {1}}
	l, err := layout.Compute(len(parents), parents, opts)
	require.NoError(t, err)
	require.Zero(t, crossings(l), "barycenter ordering untangles the two families")
}

func TestComputeRefusesBadGraphs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		n       int
		parents [][]int
		cycle   bool
	}{
		{name: "cycle", n: 3, parents: [][]int{{2}, {0}, {1}}, cycle: true},
		{name: "self loop", n: 1, parents: [][]int{{0}}, cycle: true},
		{name: "cycle below a root", n: 4, parents: [][]int{nil, {0, 3}, {1}, {2}}, cycle: true},
		{name: "out of range", n: 2, parents: [][]int{nil, {2}}},
		{name: "negative", n: 2, parents: [][]int{nil, {-1}}},
		{name: "length mismatch", n: 3, parents: [][]int{nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := layout.Compute(tc.n, tc.parents, opts)
			require.Error(t, err)
			require.Equal(t, tc.cycle, errors.Is(err, layout.ErrCycle), "%v", err)
		})
	}
}

func TestRandomDAGsKeepTheInvariants(t *testing.T) {
	t.Parallel()
	for _, size := range []int{2, 10, 50, 300, 2000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(uint64(size), 7))
			for range 5 {
				parents := randomDAG(r, size)
				l, err := layout.Compute(size, parents, opts)
				require.NoError(t, err)
				requireValid(t, parents, l)
			}
		})
	}
}

// randomDAG has up to three parents per node among the earlier ones.
func randomDAG(r *rand.Rand, n int) [][]int {
	parents := make([][]int, n)
	for i := 1; i < n; i++ {
		for range r.IntN(4) {
			p := max(0, i-1-r.IntN(min(i, 40)))
			parents[i] = append(parents[i], p)
		}
	}
	return parents
}

// requireValid checks the drawing's invariants: layers grow along edges,
// boxes never overlap, every edge runs from its parent's right-middle to
// its child's left-middle with x never decreasing and no segment through a
// box, and everything lies within Width × Height.
func requireValid(t *testing.T, parents [][]int, l *layout.Layout) {
	t.Helper()
	require.Len(t, l.Nodes, len(parents))
	for c, ps := range parents {
		for _, p := range ps {
			require.Greater(t, l.Nodes[c].Layer, l.Nodes[p].Layer)
		}
	}
	byX := map[float64][]layout.Node{}
	for i, n := range l.Nodes {
		require.Equal(t, i, n.Index)
		require.GreaterOrEqual(t, n.Y, 0.0)
		require.LessOrEqual(t, n.X+opts.NodeWidth, l.Width+1e-9)
		require.LessOrEqual(t, n.Y+opts.NodeHeight, l.Height+1e-9)
		byX[n.X] = append(byX[n.X], n)
	}
	for _, col := range byX {
		for i := range col {
			for j := i + 1; j < len(col); j++ {
				a, b := col[i], col[j]
				require.False(t, a.Y < b.Y+opts.NodeHeight && b.Y < a.Y+opts.NodeHeight, "nodes %d and %d overlap", a.Index, b.Index)
			}
		}
	}
	edges := 0
	for _, ps := range parents {
		edges += len(ps)
	}
	require.Len(t, l.Edges, edges)
	for _, e := range l.Edges {
		p, c := l.Nodes[e.From], l.Nodes[e.To]
		first, last := e.Points[0], e.Points[len(e.Points)-1]
		require.Equal(t, layout.Point{X: p.X + opts.NodeWidth, Y: p.Y + opts.NodeHeight/2}, first)
		require.Equal(t, layout.Point{X: c.X, Y: c.Y + opts.NodeHeight/2}, last)
		for i := 1; i < len(e.Points); i++ {
			a, b := e.Points[i-1], e.Points[i]
			require.GreaterOrEqual(t, b.X, a.X)
			if a.X == b.X-opts.NodeWidth { // a level run across a layer: clear of its boxes
				require.Equal(t, a.Y, b.Y)
				for _, n := range byX[a.X] {
					require.False(t, a.Y > n.Y && a.Y < n.Y+opts.NodeHeight, "edge %d→%d crosses node %d", e.From, e.To, n.Index)
				}
			}
			require.LessOrEqual(t, b.Y, l.Height+1e-9)
			require.GreaterOrEqual(t, b.Y, 0.0)
		}
	}
}

// crossings counts pairs of edges between the same two adjacent layers
// whose ends are in opposite vertical order.
func crossings(l *layout.Layout) int {
	n := 0
	for i, a := range l.Edges {
		for _, b := range l.Edges[i+1:] {
			pa, ca, pb, cb := l.Nodes[a.From], l.Nodes[a.To], l.Nodes[b.From], l.Nodes[b.To]
			if pa.Layer != pb.Layer || ca.Layer != cb.Layer || ca.Layer != pa.Layer+1 {
				continue
			}
			if (pa.Y-pb.Y)*(ca.Y-cb.Y) < 0 {
				n++
			}
		}
	}
	return n
}

func benchmarkCompute(b *testing.B, parents [][]int) {
	for b.Loop() {
		if _, err := layout.Compute(len(parents), parents, layout.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func fanOut(width int) [][]int {
	parents := make([][]int, width+2)
	for i := 1; i <= width; i++ {
		parents[i] = []int{0}
		parents[width+1] = append(parents[width+1], i)
	}
	return parents
}

func BenchmarkCompute1000(b *testing.B) {
	benchmarkCompute(b, randomDAG(rand.New(rand.NewPCG(1, 2)), 1000))
}

// BenchmarkCompute10000Layered: 100 layers of 100, each node with one to
// three parents in the previous two layers.
func BenchmarkCompute10000Layered(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	parents := make([][]int, 10000)
	for i := 100; i < len(parents); i++ {
		for range 1 + r.IntN(3) {
			parents[i] = append(parents[i], (i/100-1-r.IntN(min(2, i/100)))*100+r.IntN(100))
		}
	}
	benchmarkCompute(b, parents)
}

// BenchmarkCompute10000Tangled is a worst case: edges reaching up to 40
// nodes back make about a million dummies.
func BenchmarkCompute10000Tangled(b *testing.B) {
	benchmarkCompute(b, randomDAG(rand.New(rand.NewPCG(1, 2)), 10000))
}

func BenchmarkCompute10000FanOut(b *testing.B) { benchmarkCompute(b, fanOut(10000)) }

func FuzzCompute(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 2, 0})
	f.Add([]byte{3, 3, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		n := min(len(b), 64)
		parents := make([][]int, n)
		for i := range n {
			if b[i]%5 != 0 {
				parents[i] = []int{int(b[i]) % (n + 1)} // may be out of range, a self-loop or a cycle
			}
		}
		l, err := layout.Compute(n, parents, opts)
		if err != nil {
			return
		}
		requireValid(t, parents, l)
	})
}
