package dag

import (
	"slices"

	"github.com/expr-lang/expr/vm"
)

// Graph is a compiled, valid definition. It is immutable: callers must not modify its slices
// or the Definition, and it is safe for concurrent use.
type Graph struct {
	Def      *Definition
	Index    map[string]int // node id → position in Def.Nodes
	Parents  [][]int        // by position: parents in depends_on order
	Children [][]int        // by position: children in position order
	Order    []int          // a topological order; nodes already in dependency order keep it
	Refs     [][]string     // by position: distinct template roots in config, foreach and parallel
	// When holds each node's compiled `when` condition (nil when the node has none). Run it with
	// expr.Run(prog, env); programs are safe for concurrent use.
	When []*vm.Program

	rank []int // rank[i] is i's position in Order
}

// Compile validates d and builds its Graph. It returns a *ValidationError when d is invalid.
func Compile(d *Definition) (*Graph, error) {
	c := check(d)
	if err := c.probs.err(); err != nil {
		return nil, err
	}
	g := &Graph{
		Def: d, Index: c.index, Parents: c.parents, Children: c.children,
		Order: c.order, Refs: c.refs, When: c.when,
		rank: make([]int, len(c.order)),
	}
	for r, i := range c.order {
		g.rank[i] = r
	}
	return g, nil
}

// Roots returns the positions of the nodes without parents, in position order.
func (g *Graph) Roots() []int {
	var out []int
	for i, ps := range g.Parents {
		if len(ps) == 0 {
			out = append(out, i)
		}
	}
	return out
}

// Ancestors returns the positions of every node i depends on, directly or not, in topological
// order. i itself is not included.
func (g *Graph) Ancestors(i int) []int {
	return g.reach(i, g.Parents, false)
}

// Downstream returns i and the position of every node that depends on it, directly or not, in
// topological order: the nodes a rerun-from-i resets.
func (g *Graph) Downstream(i int) []int {
	return g.reach(i, g.Children, true)
}

// reach collects the nodes reachable from i over adj (breadth first, each node once) and sorts
// them by topological rank.
func (g *Graph) reach(i int, adj [][]int, self bool) []int {
	seen := make(map[int]bool)
	seen[i] = true
	queue := []int{i}
	for k := 0; k < len(queue); k++ {
		for _, j := range adj[queue[k]] {
			if !seen[j] {
				seen[j] = true
				queue = append(queue, j)
			}
		}
	}
	if !self {
		queue = queue[1:]
	}
	slices.SortFunc(queue, func(a, b int) int { return g.rank[a] - g.rank[b] })
	return queue
}
