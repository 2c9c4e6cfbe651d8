package layout

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
	chains   []chain   // by input edge
	scratch  scratch   // buffers reused by the ordering and placement passes
}

// chain is one input edge: its parent, its child, and its dummies, which
// are the consecutive vertices first, first+1, ... (one per layer between).
type chain struct{ from, to, first int }

// dummies is how many dummy vertices the chain has.
func (c chain) dummies(layer []int) int { return layer[c.to] - layer[c.from] - 1 }

// build adds the dummies of long edges and an initial order of each layer.
// Adjacency lists are carved from two shared arrays, one slot per link,
// so that a graph with a million dummies costs a handful of allocations.
func build(n int, parents [][]int, layer []int) *graph {
	edges, dummies := 0, 0
	for c, ps := range parents {
		for _, p := range ps {
			edges++
			dummies += layer[c] - layer[p] - 1
		}
	}
	v := n + dummies
	g := &graph{n: n, layer: make([]int, v), up: make([][]int, v), down: make([][]int, v), chains: make([]chain, 0, edges)}
	copy(g.layer, layer)
	g.carve(parents, edges+dummies)
	next := n
	for c, ps := range parents {
		for _, p := range ps {
			ch := chain{from: p, to: c, first: next}
			g.link(ch)
			g.chains = append(g.chains, ch)
			next += ch.dummies(layer)
		}
	}
	g.initialRows()
	g.prepare()
	return g
}

// carve gives every vertex empty up and down lists with room for exactly
// its links: a real node's parents and children, a dummy's one and one.
func (g *graph) carve(parents [][]int, links int) {
	outdeg := make([]int, g.n)
	for _, ps := range parents {
		for _, p := range ps {
			outdeg[p]++
		}
	}
	upBuf, downBuf := make([]int, links), make([]int, links)
	for v := range g.layer {
		in, out := 1, 1
		if v < g.n {
			in, out = len(parents[v]), outdeg[v]
		}
		g.up[v], upBuf = upBuf[:0:in], upBuf[in:]
		g.down[v], downBuf = downBuf[:0:out], downBuf[out:]
	}
}

// link threads c through its dummies, setting their layers and links.
func (g *graph) link(c chain) {
	prev := c.from
	for i := range c.dummies(g.layer) {
		d := c.first + i
		g.layer[d] = g.layer[c.from] + 1 + i
		g.down[prev] = append(g.down[prev], d)
		g.up[d] = append(g.up[d], prev)
		prev = d
	}
	g.down[prev] = append(g.down[prev], c.to)
	g.up[c.to] = append(g.up[c.to], prev)
}

// initialRows fills rows by an iterative depth-first walk from the roots in
// input order, first child on top, so that subtrees start out together.
func (g *graph) initialRows() {
	g.rows = g.emptyRows()
	g.pos = make([]int, len(g.layer))
	seen := make([]bool, len(g.layer))
	var stack []int
	for r := range g.n {
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
			l := g.layer[v]
			g.pos[v] = len(g.rows[l])
			g.rows[l] = append(g.rows[l], v)
			for i := len(g.down[v]) - 1; i >= 0; i-- {
				if !seen[g.down[v][i]] {
					stack = append(stack, g.down[v][i])
				}
			}
		}
	}
}

// emptyRows is one empty row per layer, each with room for its vertices,
// carved from one array.
func (g *graph) emptyRows() [][]int {
	var size []int
	for _, l := range g.layer {
		for l >= len(size) {
			size = append(size, 0)
		}
		size[l]++
	}
	rows := make([][]int, len(size))
	buf := make([]int, len(g.layer))
	for l, s := range size {
		rows[l], buf = buf[:0:s], buf[s:]
	}
	return rows
}
