package layout

import (
	"cmp"
	"slices"
)

// graph is the layered graph being drawn: the input nodes (vertices 0..n-1)
// plus a dummy vertex in every layer a long edge crosses, so that every
// edge of graph joins adjacent layers.
type graph struct {
	n        int       // input nodes: vertices 0..n-1; dummies follow
	layer    []int     // by vertex
	up, down [][]int   // by vertex: neighbours in the previous and next layer
	rows     [][]int   // by layer: its vertices, in drawing order
	pos      []int     // by vertex: its index in rows[layer]
	y, h     []float64 // by vertex: top and height of its slot
	chains   [][]int   // by input edge: parent, its dummies, child
}

// build adds the dummies of long edges and an initial order of each layer:
// depth first from the roots in input order, so that subtrees stay together.
func build(n int, parents [][]int, layer []int) *graph {
	g := &graph{n: n, layer: slices.Clone(layer), up: make([][]int, n), down: make([][]int, n)}
	link := func(a, b int) {
		g.down[a] = append(g.down[a], b)
		g.up[b] = append(g.up[b], a)
	}
	for c, ps := range parents {
		for _, p := range ps {
			chain := []int{p}
			prev := p
			for l := layer[p] + 1; l < layer[c]; l++ {
				d := len(g.layer)
				g.layer = append(g.layer, l)
				g.up, g.down = append(g.up, nil), append(g.down, nil)
				link(prev, d)
				chain = append(chain, d)
				prev = d
			}
			link(prev, c)
			g.chains = append(g.chains, append(chain, c))
		}
	}
	g.initialRows(n)
	return g
}

// initialRows fills rows by an iterative depth-first walk from the roots.
func (g *graph) initialRows(n int) {
	depth := 0
	for _, l := range g.layer {
		depth = max(depth, l+1)
	}
	g.rows = make([][]int, depth)
	g.pos = make([]int, len(g.layer))
	seen := make([]bool, len(g.layer))
	var stack []int
	for r := range n {
		if len(g.up[r]) > 0 || seen[r] {
			continue
		}
		stack = append(stack, r)
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[v] {
				continue
			}
			seen[v] = true
			g.pos[v] = len(g.rows[g.layer[v]])
			g.rows[g.layer[v]] = append(g.rows[g.layer[v]], v)
			for i := len(g.down[v]) - 1; i >= 0; i-- { // first child on top
				if !seen[g.down[v][i]] {
					stack = append(stack, g.down[v][i])
				}
			}
		}
	}
}

// order runs barycenter sweeps, alternately down and up, and keeps the
// rows with the fewest crossings seen. It stops at zero crossings or after
// two sweeps without improvement.
func (g *graph) order(sweeps int) {
	best, bestC := g.snapshot(), g.crossings()
	stale := 0
	for s := 0; s < sweeps && bestC > 0 && stale < 2; s++ {
		if s%2 == 0 {
			for l := 1; l < len(g.rows); l++ {
				g.sortRow(l, g.up)
			}
		} else {
			for l := len(g.rows) - 2; l >= 0; l-- {
				g.sortRow(l, g.down)
			}
		}
		if c := g.crossings(); c < bestC {
			best, bestC, stale = g.snapshot(), c, 0
		} else {
			stale++
		}
	}
	g.rows = best
	for _, row := range g.rows {
		for i, v := range row {
			g.pos[v] = i
		}
	}
}

func (g *graph) snapshot() [][]int {
	out := make([][]int, len(g.rows))
	for i, r := range g.rows {
		out[i] = slices.Clone(r)
	}
	return out
}

// sortRow orders layer l by the mean position of each vertex's neighbours
// in the fixed adjacent layer (nbr), scaled to this layer's length; a
// vertex without any keeps its place.
func (g *graph) sortRow(l int, nbr [][]int) {
	row := g.rows[l]
	type keyed struct {
		v int
		b float64
	}
	ks := make([]keyed, len(row))
	for i, v := range row {
		ks[i] = keyed{v, float64(i)}
		if len(nbr[v]) == 0 {
			continue
		}
		sum := 0
		for _, u := range nbr[v] {
			sum += g.pos[u]
		}
		other := len(g.rows[g.layer[nbr[v][0]]])
		ks[i].b = float64(sum) / float64(len(nbr[v])) * float64(len(row)) / float64(max(1, other))
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return cmp.Compare(a.b, b.b) })
	for i, k := range ks {
		row[i] = k.v
		g.pos[k.v] = i
	}
}

// crossings counts edge crossings between every pair of adjacent layers:
// the inversions of the lower ends when edges are sorted by their upper
// ends (O(E log V) with a Fenwick tree).
func (g *graph) crossings() int {
	total := 0
	for l := 0; l+1 < len(g.rows); l++ {
		var ends [][2]int
		for _, u := range g.rows[l] {
			for _, v := range g.down[u] {
				ends = append(ends, [2]int{g.pos[u], g.pos[v]})
			}
		}
		slices.SortFunc(ends, func(a, b [2]int) int {
			if a[0] != b[0] {
				return a[0] - b[0]
			}
			return a[1] - b[1]
		})
		tree := make([]int, len(g.rows[l+1])+1)
		for i, e := range ends {
			// edges seen so far whose lower end is right of e's cross it
			total += i - prefix(tree, e[1]+1)
			for k := e[1] + 1; k < len(tree); k += k & -k {
				tree[k]++
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
