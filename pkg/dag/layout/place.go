package layout

// alignRounds is how many down-and-up passes pull nodes towards their
// neighbours (fewer for huge graphs: see Compute).
const alignRounds = 4

// place gives every vertex its slot: real nodes NodeHeight, dummies
// NodeGap, stacked in row order with NodeGap between slots, then pulled
// towards the centres of their neighbours (parents on the way down,
// children on the way up) without ever breaking order or gap.
func (g *graph) place(o Options, rounds int) {
	n := len(g.layer)
	g.y, g.h = make([]float64, n), make([]float64, n)
	for _, row := range g.rows {
		y := 0.0
		for _, v := range row {
			g.h[v] = o.NodeGap
			if !g.dummy(v) {
				g.h[v] = o.NodeHeight
			}
			g.y[v] = y
			y += g.h[v] + o.NodeGap
		}
	}
	for range rounds {
		for l := 1; l < len(g.rows); l++ {
			g.align(l, g.up, o.NodeGap)
		}
		for l := len(g.rows) - 2; l >= 0; l-- {
			g.align(l, g.down, o.NodeGap)
		}
	}
	g.normalise()
}

// normalise shifts every slot so that the highest top is 0.
func (g *graph) normalise() {
	top := 0.0
	for _, y := range g.y {
		top = min(top, y)
	}
	for v := range g.y {
		g.y[v] -= top
	}
}

// dummy reports whether v is a dummy vertex (not an input node).
func (g *graph) dummy(v int) bool { return v >= g.n }

// align moves layer l's slots towards the mean centre of their neighbours
// in nbr. Packing the wishes top-down (each slot as high as wished but
// below the previous one) and bottom-up (as low as wished but above the
// next one) both keep order and gaps; so does their mean, which is used.
func (g *graph) align(l int, nbr [][]int, gap float64) {
	row := g.rows[l]
	want, down, up := g.scratch.want[:len(row)], g.scratch.down[:len(row)], g.scratch.up[:len(row)]
	for i, v := range row {
		want[i] = g.y[v]
		if len(nbr[v]) == 0 {
			continue
		}
		c := 0.0
		for _, u := range nbr[v] {
			c += g.y[u] + g.h[u]/2
		}
		want[i] = c/float64(len(nbr[v])) - g.h[v]/2
	}
	for i := range row {
		down[i] = want[i]
		if i > 0 {
			down[i] = max(want[i], down[i-1]+g.h[row[i-1]]+gap)
		}
	}
	for i := len(row) - 1; i >= 0; i-- {
		up[i] = want[i]
		if i < len(row)-1 {
			up[i] = min(want[i], up[i+1]-gap-g.h[row[i]])
		}
	}
	for i, v := range row {
		g.y[v] = (down[i] + up[i]) / 2
	}
}

// drawing turns the placed graph into the Layout of the n input nodes.
// Every edge's points are carved from one array.
func (g *graph) drawing(n int, o Options) *Layout {
	col := func(l int) float64 { return float64(l) * (o.NodeWidth + o.LayerGap) }
	mid := func(v int) float64 { return g.y[v] + g.h[v]/2 }
	out := &Layout{Nodes: make([]Node, n), Edges: make([]Edge, len(g.chains)), Layers: len(g.rows)}
	for v := range n {
		out.Nodes[v] = Node{Index: v, Layer: g.layer[v], X: col(g.layer[v]), Y: g.y[v]}
	}
	buf := make([]Point, 2*len(g.chains)+2*(len(g.layer)-n))
	for i, c := range g.chains {
		k := 2 + 2*c.dummies(g.layer)
		pts := buf[:0:k]
		buf = buf[k:]
		pts = append(pts, Point{col(g.layer[c.from]) + o.NodeWidth, mid(c.from)})
		for d := c.first; d < c.first+c.dummies(g.layer); d++ {
			x := col(g.layer[d])
			pts = append(pts, Point{x, mid(d)}, Point{x + o.NodeWidth, mid(d)})
		}
		pts = append(pts, Point{col(g.layer[c.to]), mid(c.to)})
		out.Edges[i] = Edge{From: c.from, To: c.to, Points: pts}
	}
	if len(g.rows) > 0 {
		out.Width = col(len(g.rows)-1) + o.NodeWidth
	}
	for v := range g.y {
		out.Height = max(out.Height, g.y[v]+g.h[v])
	}
	return out
}
