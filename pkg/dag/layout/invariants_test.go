package layout_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/braidhq/braid/pkg/dag/layout"
	"github.com/stretchr/testify/require"
)

var opts = layout.Options{NodeWidth: 100, NodeHeight: 30, LayerGap: 50, NodeGap: 10}

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
				again, err := layout.Compute(size, parents, opts)
				require.NoError(t, err)
				require.Equal(t, l, again, "the same graph gives the same drawing")
			}
		})
	}
}

// randomDAG has up to three parents per node among the 40 before it, so
// that many edges span several layers.
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

// FuzzCompute reads a node count and then (child, parent) byte pairs. A
// pair whose child byte has its high bit clear makes a parent below the
// child, so a graph of only such pairs is acyclic and must be laid out; a
// pair with the bit set may make a cycle, a self-loop or an index out of
// range, and then Compute may refuse the graph but must not panic.
func FuzzCompute(f *testing.F) {
	f.Add([]byte{4, 1, 0, 2, 1, 3, 2, 3, 0})       // a chain and a long edge
	f.Add([]byte{5, 1, 0, 2, 0, 3, 1, 3, 2, 4, 0}) // a diamond and a long edge
	f.Add([]byte{3, 0x80, 0, 0x81, 2, 0x82, 1})    // a cycle
	f.Add([]byte{2, 0x81, 9})                      // out of range
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		n, acyclic := int(b[0])%48+1, true
		parents := make([][]int, n)
		for i := 1; i+1 < len(b) && i < 400; i += 2 {
			c, p := int(b[i]&0x7f)%n, int(b[i+1])
			switch {
			case b[i]&0x80 != 0:
				acyclic = false
				parents[c] = append(parents[c], p%(n+2)-1)
			case c > 0:
				parents[c] = append(parents[c], p%c)
			}
		}
		l, err := layout.Compute(n, parents, opts)
		if err != nil {
			require.False(t, acyclic, "an acyclic graph is refused: %v", err)
			return
		}
		requireValid(t, parents, l)
	})
}

// requireValid checks the drawing's invariants: layers grow along edges,
// boxes never overlap, every edge runs from its parent's right-middle to
// its child's left-middle with x strictly increasing and never through a
// box, and everything lies within Width × Height.
func requireValid(t *testing.T, parents [][]int, l *layout.Layout) {
	t.Helper()
	require.Len(t, l.Nodes, len(parents))
	edges := 0
	for c, ps := range parents {
		edges += len(ps)
		for _, p := range ps {
			require.Greater(t, l.Nodes[c].Layer, l.Nodes[p].Layer)
		}
	}
	cols := columns(t, l)
	require.Len(t, l.Edges, edges)
	for _, e := range l.Edges {
		requireRoute(t, l, cols, e)
	}
}

// columns checks every node's box against the drawing's bounds and its
// neighbours in its column, and returns the columns, by x, sorted by y.
func columns(t *testing.T, l *layout.Layout) map[float64][]layout.Node {
	t.Helper()
	cols := map[float64][]layout.Node{}
	for i, n := range l.Nodes {
		require.Equal(t, i, n.Index)
		require.True(t, inside(l, layout.Point{X: n.X, Y: n.Y}), "node %d starts outside the drawing", i)
		require.True(t, inside(l, layout.Point{X: n.X + opts.NodeWidth, Y: n.Y + opts.NodeHeight}), "node %d ends outside the drawing", i)
		cols[n.X] = append(cols[n.X], n)
	}
	for _, col := range cols {
		slices.SortFunc(col, func(a, b layout.Node) int { return cmp.Compare(a.Y, b.Y) })
		for i := 1; i < len(col); i++ {
			if col[i].Y < col[i-1].Y+opts.NodeHeight {
				require.Failf(t, "overlap", "nodes %d and %d overlap", col[i-1].Index, col[i].Index)
			}
		}
	}
	return cols
}

// requireRoute checks one edge's polyline.
func requireRoute(t *testing.T, l *layout.Layout, cols map[float64][]layout.Node, e layout.Edge) {
	t.Helper()
	p, c := l.Nodes[e.From], l.Nodes[e.To]
	require.Equal(t, layout.Point{X: p.X + opts.NodeWidth, Y: p.Y + opts.NodeHeight/2}, e.Points[0])
	require.Equal(t, layout.Point{X: c.X, Y: c.Y + opts.NodeHeight/2}, e.Points[len(e.Points)-1])
	for i, pt := range e.Points {
		if !inside(l, pt) {
			require.Failf(t, "outside", "edge %d→%d: point %v outside %gx%g", e.From, e.To, pt, l.Width, l.Height)
		}
		if i == 0 {
			continue
		}
		requireSegment(t, cols, e, e.Points[i-1], pt)
	}
}

// requireSegment checks one piece of a route: one that starts at a
// column's left edge runs level across the column, clear of its boxes;
// any other crosses the gap to the next column's left edge.
func requireSegment(t *testing.T, cols map[float64][]layout.Node, e layout.Edge, a, b layout.Point) {
	t.Helper()
	if b.X <= a.X {
		require.Failf(t, "backwards", "edge %d→%d: x goes %g → %g", e.From, e.To, a.X, b.X)
	}
	col, across := cols[a.X]
	if !across {
		if _, ok := cols[b.X]; !ok || b.X != a.X+opts.LayerGap {
			require.Failf(t, "stray", "edge %d→%d: %v → %v does not end at the next column", e.From, e.To, a, b)
		}
		return
	}
	if b.X != a.X+opts.NodeWidth || b.Y != a.Y {
		require.Failf(t, "not level", "edge %d→%d: %v → %v crosses a column unlevel", e.From, e.To, a, b)
	}
	if n, ok := boxAt(col, a.Y); ok {
		require.Failf(t, "through a box", "edge %d→%d crosses node %d", e.From, e.To, n.Index)
	}
}

// boxAt finds the node of a column (sorted by y) whose box contains y
// strictly inside.
func boxAt(col []layout.Node, y float64) (layout.Node, bool) {
	i := sort.Search(len(col), func(i int) bool { return col[i].Y+opts.NodeHeight > y })
	if i < len(col) && col[i].Y < y {
		return col[i], true
	}
	return layout.Node{}, false
}

// inside reports whether p lies within the drawing.
func inside(l *layout.Layout, p layout.Point) bool {
	const eps = 1e-9
	return p.X >= 0 && p.Y >= 0 && p.X <= l.Width+eps && p.Y <= l.Height+eps
}
