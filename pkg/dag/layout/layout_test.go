package layout_test

import (
	"errors"
	"testing"

	"github.com/braidhq/braid/pkg/dag/layout"
	"github.com/stretchr/testify/require"
)

func TestCompute(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		n         int
		parents   [][]int
		want      []int // layers
		wantErr   bool
		wantCycle bool
	}{
		{name: "empty", parents: [][]int{}, want: []int{}},
		{name: "nil parents", parents: nil, want: []int{}},
		{name: "single", n: 1, parents: [][]int{nil}, want: []int{0}},
		{name: "chain", n: 4, parents: [][]int{nil, {0}, {1}, {2}}, want: []int{0, 1, 2, 3}},
		{name: "diamond", n: 4, parents: [][]int{nil, {0}, {0}, {1, 2}}, want: []int{0, 1, 1, 2}},
		{name: "long edge", n: 5, parents: [][]int{nil, {0}, {1}, {2}, {0, 3}}, want: []int{0, 1, 2, 3, 4}},
		{name: "two roots", n: 3, parents: [][]int{nil, nil, {0, 1}}, want: []int{0, 0, 1}},
		{name: "fan out 1-100-1", n: 102, parents: fanOut(100), want: fanOutLayers(100)},
		{name: "duplicate parent", n: 2, parents: [][]int{nil, {0, 0}}, want: []int{0, 1}},
		{name: "cycle", n: 3, parents: [][]int{{2}, {0}, {1}}, wantErr: true, wantCycle: true},
		{name: "self loop", n: 1, parents: [][]int{{0}}, wantErr: true, wantCycle: true},
		{name: "cycle below a root", n: 4, parents: [][]int{nil, {0, 3}, {1}, {2}}, wantErr: true, wantCycle: true},
		{name: "out of range", n: 2, parents: [][]int{nil, {2}}, wantErr: true},
		{name: "negative", n: 2, parents: [][]int{nil, {-1}}, wantErr: true},
		{name: "length mismatch", n: 3, parents: [][]int{nil}, wantErr: true},
		{name: "negative count", n: -1, parents: nil, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, err := layout.Compute(tc.n, tc.parents, opts)
			if tc.wantErr {
				require.Error(t, err)
				require.Equal(t, tc.wantCycle, errors.Is(err, layout.ErrCycle), "%v", err)
				return
			}
			require.NoError(t, err)
			got := make([]int, len(l.Nodes))
			for i, n := range l.Nodes {
				got[i] = n.Layer
			}
			require.Equal(t, tc.want, got)
			requireValid(t, tc.parents, l)
		})
	}
}

func TestEmptyGraphIsEmpty(t *testing.T) {
	t.Parallel()
	l, err := layout.Compute(0, nil, layout.Options{})
	require.NoError(t, err)
	require.Equal(t, &layout.Layout{Nodes: []layout.Node{}, Edges: []layout.Edge{}}, l)
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
	l, err := layout.Compute(width+2, fanOut(width), opts)
	require.NoError(t, err)
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
	for layer := 1; layer <= 3; layer++ {
		x := l.Nodes[layer].X
		require.Contains(t, long.Points, layout.Point{X: x, Y: long.Points[2*layer-1].Y}, "enters layer %d", layer)
		require.Contains(t, long.Points, layout.Point{X: x + opts.NodeWidth, Y: long.Points[2*layer-1].Y}, "leaves layer %d level", layer)
	}
	for _, p := range long.Points {
		for _, n := range l.Nodes {
			in := p.X > n.X && p.X < n.X+opts.NodeWidth && p.Y > n.Y && p.Y < n.Y+opts.NodeHeight
			require.False(t, in, "point %v lies in node %d", p, n.Index)
		}
	}
}

func TestOrderingRemovesCrossings(t *testing.T) {
	t.Parallel()
	// Roots 0 and 1; 2 is a child of both, 3 of 0 only. The first,
	// depth-first order puts 2 above 3, so 1→2 crosses 0→3; barycenters
	// move 2 below 3 (order_test.go checks the first order does cross).
	parents := crossingGraph
	l, err := layout.Compute(len(parents), parents, opts)
	require.NoError(t, err)
	require.Zero(t, crossings(l), "barycenter ordering untangles the two families")
}

// crossingGraph is drawn with one crossing before the ordering sweeps.
var crossingGraph = [][]int{nil, nil, {0, 1}, {0}, {3}}

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

// fanOut is a root, width children, and a join of them all.
func fanOut(width int) [][]int {
	parents := make([][]int, width+2)
	for i := 1; i <= width; i++ {
		parents[i] = []int{0}
		parents[width+1] = append(parents[width+1], i)
	}
	return parents
}

// fanOutLayers is the layers of fanOut(width).
func fanOutLayers(width int) []int {
	layers := make([]int, width+2)
	for i := 1; i <= width; i++ {
		layers[i] = 1
	}
	layers[width+1] = 2
	return layers
}
