package layout

import (
	"cmp"
	"slices"
)

// scratch holds buffers sized to the widest row, reused across passes.
type scratch struct {
	keys []keyed   // sortRow
	tree []int     // crossings: a Fenwick tree over a row's positions
	want []float64 // align: the tops the neighbours wish for
	down []float64 // align: the wishes packed top-down
	up   []float64 // align: the wishes packed bottom-up
}

// keyed is a vertex with its barycenter and its current position.
type keyed struct {
	v, i int
	b    float64
}

// prepare sizes the scratch buffers for the widest row.
func (g *graph) prepare() {
	w := 0
	for _, row := range g.rows {
		w = max(w, len(row))
	}
	g.scratch = scratch{
		keys: make([]keyed, w), tree: make([]int, w+1),
		want: make([]float64, w), down: make([]float64, w), up: make([]float64, w),
	}
}

// order runs barycenter sweeps, alternately down and up, and keeps the
// order with the fewest crossings seen. It stops at zero crossings or
// after two sweeps without improvement.
func (g *graph) order(sweeps int) {
	best, bestC := slices.Clone(g.pos), g.crossings()
	stale := 0
	for s := 0; s < sweeps && bestC > 0 && stale < 2; s++ {
		g.sweep(s%2 == 0)
		if c := g.crossings(); c < bestC {
			copy(best, g.pos)
			bestC, stale = c, 0
		} else {
			stale++
		}
	}
	copy(g.pos, best)
	for v, i := range g.pos {
		g.rows[g.layer[v]][i] = v
	}
}

// sweep sorts every row by its neighbours in the row before it: the row
// above when going down, the row below when going up.
func (g *graph) sweep(down bool) {
	if down {
		for l := 1; l < len(g.rows); l++ {
			g.sortRow(l, g.up)
		}
		return
	}
	for l := len(g.rows) - 2; l >= 0; l-- {
		g.sortRow(l, g.down)
	}
}

// sortRow orders layer l by the mean position of each vertex's neighbours
// in the fixed adjacent layer (nbr), scaled to this layer's length; a
// vertex without any keeps its place, and ties keep their order.
func (g *graph) sortRow(l int, nbr [][]int) {
	row := g.rows[l]
	ks := g.scratch.keys[:len(row)]
	for i, v := range row {
		ks[i] = keyed{v: v, i: i, b: float64(i)}
		if len(nbr[v]) == 0 {
			continue
		}
		sum := 0
		for _, u := range nbr[v] {
			sum += g.pos[u]
		}
		other := len(g.rows[g.layer[nbr[v][0]]])
		ks[i].b = float64(sum) / float64(len(nbr[v])) * float64(len(row)) / float64(other)
	}
	slices.SortFunc(ks, func(a, b keyed) int { return cmp.Or(cmp.Compare(a.b, b.b), a.i-b.i) })
	for i, k := range ks {
		row[i] = k.v
		g.pos[k.v] = i
	}
}

// crossings counts edge crossings between every pair of adjacent layers.
// Edges u→v and u'→v' with u above u' cross when v is below v'; walking
// the upper row top-down, each vertex's edges first count the earlier
// edges that end below theirs, then join them (a Fenwick tree over the
// lower row), so a layer pair costs O(E log V) and no sorting.
func (g *graph) crossings() int {
	total := 0
	for l := 0; l+1 < len(g.rows); l++ {
		tree := g.scratch.tree[:len(g.rows[l+1])+1]
		clear(tree)
		seen := 0
		for _, u := range g.rows[l] {
			for _, v := range g.down[u] {
				total += seen - prefix(tree, g.pos[v]+1)
			}
			for _, v := range g.down[u] {
				for k := g.pos[v] + 1; k < len(tree); k += k & -k {
					tree[k]++
				}
				seen++
			}
		}
	}
	return total
}

// prefix sums tree[1..k].
func prefix(tree []int, k int) int {
	s := 0
	for ; k > 0; k -= k & -k {
		s += tree[k]
	}
	return s
}
