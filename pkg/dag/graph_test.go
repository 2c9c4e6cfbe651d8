package dag

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/expr-lang/expr"
	"github.com/stretchr/testify/require"
)

// diamond is a -> {b, c} -> d, listed out of order, plus an unrelated e.
func diamond(t *testing.T) *Graph {
	t.Helper()
	d, err := Parse(wf(`{"id": "d", "handler": "noop", "depends_on": ["b", "c"], "config": "<< b.x >> << a >> << input.q >>"},
		{"id": "b", "handler": "noop", "depends_on": ["a"], "when": "a.ok == true"},
		{"id": "a", "handler": "noop"},
		{"id": "c", "handler": "noop", "depends_on": ["a"], "foreach": "<< a.items >>", "config": {"i": "<< item >>"}},
		{"id": "e", "handler": "noop"}`))
	require.NoError(t, err)
	g, err := Compile(d)
	require.NoError(t, err)
	return g
}

func TestCompileDiamond(t *testing.T) {
	t.Parallel()
	g := diamond(t)
	require.Equal(t, map[string]int{"d": 0, "b": 1, "a": 2, "c": 3, "e": 4}, g.Index)
	require.Equal(t, [][]int{{1, 3}, {2}, nil, {2}, nil}, g.Parents)
	require.Equal(t, [][]int{nil, {0}, {1, 3}, {0}, nil}, g.Children)
	require.Equal(t, []int{2, 1, 3, 0, 4}, g.Order)
	require.Equal(t, [][]string{{"b", "a", "input"}, nil, nil, {"item", "a"}, nil}, g.Refs)
	require.Equal(t, []int{2, 4}, g.Roots())
	require.Nil(t, g.When[0])
	require.NotNil(t, g.When[1])
	ok, err := expr.Run(g.When[1], map[string]any{"a": map[string]any{"ok": true}})
	require.NoError(t, err)
	require.Equal(t, true, ok)
}

func TestGraphDownstreamAndAncestors(t *testing.T) {
	t.Parallel()
	g := diamond(t)
	tests := []struct {
		node       string
		downstream []string
		ancestors  []string
	}{
		{"a", []string{"a", "b", "c", "d"}, nil},
		{"b", []string{"b", "d"}, []string{"a"}},
		{"c", []string{"c", "d"}, []string{"a"}},
		{"d", []string{"d"}, []string{"a", "b", "c"}},
		{"e", []string{"e"}, nil},
	}
	names := func(pos []int) []string {
		var out []string
		for _, i := range pos {
			out = append(out, g.Def.Nodes[i].ID)
		}
		return out
	}
	for _, tc := range tests {
		require.Equal(t, tc.downstream, names(g.Downstream(g.Index[tc.node])), "downstream of %s", tc.node)
		require.Equal(t, tc.ancestors, names(g.Ancestors(g.Index[tc.node])), "ancestors of %s", tc.node)
	}
}

func TestOrderKeepsAValidListOrder(t *testing.T) {
	t.Parallel()
	g, err := Compile(&Definition{Name: "wf", Nodes: []Node{
		{ID: "a", Handler: "noop"}, {ID: "x", Handler: "noop"},
		{ID: "b", Handler: "noop", DependsOn: []string{"a"}}, {ID: "y", Handler: "noop"},
	}})
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2, 3}, g.Order)
}

// randomDAG builds n nodes where each may depend on up to three earlier nodes, then shuffles
// the list so the order must be computed.
func randomDAG(rng *rand.Rand, n int) *Definition {
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{ID: "n" + strconv.Itoa(i), Handler: "noop"}
		for k := 0; i > 0 && k < rng.IntN(4); k++ {
			dep := "n" + strconv.Itoa(rng.IntN(i))
			if !slices.Contains(nodes[i].DependsOn, dep) {
				nodes[i].DependsOn = append(nodes[i].DependsOn, dep)
			}
		}
	}
	rng.Shuffle(n, func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	return &Definition{Name: "random", Nodes: nodes}
}

// reachable is a reference implementation of Downstream's set: depth-first over Children.
func reachable(g *Graph, from int) []int {
	seen := map[int]bool{from: true}
	stack := []int{from}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, v := range g.Children[u] {
			if !seen[v] {
				seen[v] = true
				stack = append(stack, v)
			}
		}
	}
	var out []int
	for v := range seen {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

func TestRandomDAGsOrderAndDownstream(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		g, err := Compile(randomDAG(rng, 1+rng.IntN(60)))
		require.NoError(t, err)
		rank := make([]int, len(g.Order))
		for r, i := range g.Order {
			rank[i] = r
		}
		require.Len(t, g.Order, len(g.Def.Nodes), "round %d", round)
		for i, ps := range g.Parents {
			for _, p := range ps {
				require.Less(t, rank[p], rank[i], "round %d: parent after child", round)
			}
		}
		for i := range g.Def.Nodes {
			down := g.Downstream(i)
			require.Equal(t, i, down[0], "round %d: node first", round)
			require.True(t, slices.IsSortedFunc(down, func(a, b int) int { return rank[a] - rank[b] }))
			require.Equal(t, reachable(g, i), slices.Sorted(slices.Values(down)), "round %d node %d", round, i)
		}
	}
}

func TestLargeGraphs(t *testing.T) {
	t.Parallel()
	fanOut := func() []Node {
		nodes := []Node{{ID: "root", Handler: "noop"}}
		for i := 1; i < MaxNodes; i++ {
			nodes = append(nodes, Node{ID: "n" + strconv.Itoa(i), Handler: "noop", DependsOn: []string{"root"},
				Config: []byte(`{"x": "<< root.items >>"}`)})
		}
		return nodes
	}
	fanIn := func() []Node {
		nodes := make([]Node, MaxNodes)
		deps := make([]string, 0, MaxNodes-1)
		for i := range MaxNodes - 1 {
			nodes[i] = Node{ID: "n" + strconv.Itoa(i), Handler: "noop"}
			deps = append(deps, nodes[i].ID)
		}
		nodes[MaxNodes-1] = Node{ID: "sink", Handler: "noop", DependsOn: deps, Config: []byte(`"<< n0 >> << n9998 >>"`)}
		return nodes
	}
	farRefs := func() []Node { // every node reads its grandparent: one ancestry bit per node
		nodes := chain(MaxNodes)
		for i := 2; i < MaxNodes; i++ {
			nodes[i].Config = []byte(`"<< n` + strconv.Itoa(i-2) + ` >> << n0 >>"`)
		}
		return nodes
	}
	tests := []struct {
		name  string
		nodes []Node
		last  int // position expected last in Order
		down  int // size of Downstream of the first node in Order
		anc   int // size of Ancestors of the last node in Order
	}{
		{"chain", chain(MaxNodes), MaxNodes - 1, MaxNodes, MaxNodes - 1},
		{"fan-out", fanOut(), MaxNodes - 1, MaxNodes, 1},
		{"fan-in", fanIn(), MaxNodes - 1, 2, MaxNodes - 1},
		{"far references", farRefs(), MaxNodes - 1, MaxNodes, MaxNodes - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, err := Compile(&Definition{Name: "big", Nodes: tc.nodes})
			require.NoError(t, err)
			require.Len(t, g.Order, MaxNodes)
			require.Equal(t, tc.last, g.Order[MaxNodes-1])
			require.Len(t, g.Downstream(g.Order[0]), tc.down)
			require.Len(t, g.Ancestors(g.Order[MaxNodes-1]), tc.anc)
		})
	}
}

func TestLargeCycleAndManyCycles(t *testing.T) {
	t.Parallel()
	nodes := chain(MaxNodes)
	nodes[0].DependsOn = []string{nodes[MaxNodes-1].ID}
	problems := problemsOf(t, (&Definition{Name: "big", Nodes: nodes}).Validate())
	require.Len(t, problems, 1)
	require.Equal(t, "$.nodes[0].depends_on[0]", problems[0].Path)

	many := make([]Node, 0, 200) // 100 two-node cycles: only maxCycles are reported
	for i := range 100 {
		a, b := "a"+strconv.Itoa(i), "b"+strconv.Itoa(i)
		many = append(many, Node{ID: a, Handler: "noop", DependsOn: []string{b}}, Node{ID: b, Handler: "noop", DependsOn: []string{a}})
	}
	problems = problemsOf(t, (&Definition{Name: "many", Nodes: many}).Validate())
	require.Len(t, problems, maxCycles)
	require.Equal(t, Problem{"$.nodes[0].depends_on[0]", "cycle: a0 -> b0 -> a0"}, problems[0])
}

func BenchmarkCompileChain(b *testing.B) {
	d := &Definition{Name: "big", Nodes: chain(MaxNodes)}
	for b.Loop() {
		if _, err := Compile(d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseSpec(b *testing.B) {
	data := readSeed(b, "spec")
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
