// Package layout places a DAG's nodes in layers, left to right, for the web
// UI's run page: a Sugiyama-style layered drawing. Nodes are layered by
// their longest path from a root; edges that span several layers get a
// dummy node in each layer they cross, so that they are routed between the
// boxes of those layers; each layer is ordered by barycenter sweeps that
// keep the ordering with the fewest crossings; and vertical positions pull
// every node towards its neighbours while keeping every box clear of the
// others. It is pure and deterministic: the same graph gives the same
// drawing.
package layout

import (
	"cmp"
	"errors"
	"fmt"
)

// Options sizes the drawing, in pixels. Zero values take the defaults in
// parentheses.
type Options struct {
	NodeWidth  float64 // (160)
	NodeHeight float64 // (36)
	LayerGap   float64 // horizontal gap between layers (80)
	NodeGap    float64 // vertical gap between boxes in a layer (16)
	Sweeps     int     // barycenter ordering sweeps (8; fewer above 20,000 nodes and dummies)
}

func (o Options) withDefaults() Options {
	o.NodeWidth = cmp.Or(o.NodeWidth, 160)
	o.NodeHeight = cmp.Or(o.NodeHeight, 36)
	o.LayerGap = cmp.Or(o.LayerGap, 80)
	o.NodeGap = cmp.Or(o.NodeGap, 16)
	o.Sweeps = cmp.Or(o.Sweeps, 8)
	return o
}

// Point is a position in the drawing.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Node is one placed node: its index in the input, its layer (0 for the
// roots) and the top-left corner of its box.
type Node struct {
	Index int     `json:"-"`
	Layer int     `json:"layer"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
}

// Edge is one routed edge from parent From to child To (input indices).
// Points is a polyline from the right-middle of From's box to the
// left-middle of To's: across each layer it crosses it runs level through
// a slot of its own (two points, at the layer's left and right edges), so
// it never passes through a box.
type Edge struct {
	From   int     `json:"from"`
	To     int     `json:"to"`
	Points []Point `json:"points"`
}

// Layout is the whole drawing; Nodes are in input order.
type Layout struct {
	Nodes  []Node  `json:"nodes"`
	Edges  []Edge  `json:"edges"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Layers int     `json:"layers"`
}

// ErrCycle is returned for a graph that is not acyclic.
var ErrCycle = errors.New("the graph has a cycle")

// Compute lays out n nodes whose parents are given by parents[i] (input
// indices; len(parents) must be n, and a nil entry means a root). It
// returns an error for an index out of range, a self-loop or a cycle.
func Compute(n int, parents [][]int, o Options) (*Layout, error) {
	if len(parents) != n {
		return nil, fmt.Errorf("layout: %d parent lists for %d nodes", len(parents), n)
	}
	o = o.withDefaults()
	layer, err := layers(n, parents)
	if err != nil {
		return nil, err
	}
	g := build(n, parents, layer)
	// Graphs whose long edges add hundreds of thousands of dummies get
	// fewer passes: a quick, still valid drawing beats a slow perfect one.
	sweeps, rounds := o.Sweeps, alignRounds
	switch v := len(g.layer); {
	case v > 200000:
		sweeps, rounds = min(sweeps, 2), 1
	case v > 20000:
		sweeps, rounds = min(sweeps, 4), 2
	}
	g.order(sweeps)
	g.place(o, rounds)
	return g.drawing(n, o), nil
}

// layers is each node's longest path from a root (Kahn's topological sort).
func layers(n int, parents [][]int) ([]int, error) {
	children, err := childLists(n, parents)
	if err != nil {
		return nil, err
	}
	indeg := make([]int, n)
	queue := make([]int, 0, n)
	for i, ps := range parents {
		if indeg[i] = len(ps); indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	layer := make([]int, n)
	for head := 0; head < len(queue); head++ {
		p := queue[head]
		for _, c := range children[p] {
			layer[c] = max(layer[c], layer[p]+1)
			if indeg[c]--; indeg[c] == 0 {
				queue = append(queue, c)
			}
		}
	}
	if len(queue) != n {
		return nil, fmt.Errorf("layout: %d of %d nodes are on or below a cycle: %w", n-len(queue), n, ErrCycle)
	}
	return layer, nil
}

// childLists inverts parents, checking every index; the lists are carved
// from one array.
func childLists(n int, parents [][]int) ([][]int, error) {
	outdeg := make([]int, n)
	edges := 0
	for c, ps := range parents {
		for _, p := range ps {
			if p < 0 || p >= n {
				return nil, fmt.Errorf("layout: node %d has parent %d, out of range [0,%d)", c, p, n)
			}
			if p == c {
				return nil, fmt.Errorf("layout: node %d is its own parent: %w", c, ErrCycle)
			}
			outdeg[p]++
			edges++
		}
	}
	children, buf := make([][]int, n), make([]int, edges)
	for p, d := range outdeg {
		children[p], buf = buf[:0:d], buf[d:]
	}
	for c, ps := range parents {
		for _, p := range ps {
			children[p] = append(children[p], c)
		}
	}
	return children, nil
}
