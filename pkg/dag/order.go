package dag

import (
	"container/heap"
	"fmt"
	"strings"
)

// maxCycles is how many cycles validation reports; fixing those reveals any others.
const maxCycles = 20

// sortNodes computes a topological order (Kahn's algorithm, smallest position first, so a node
// list that already respects its dependencies keeps its order) and reports cycles.
func (c *checker) sortNodes() {
	n := len(c.d.Nodes)
	waiting := make([]int, n)
	ready := &intHeap{}
	for i := range n {
		if waiting[i] = len(c.parents[i]); waiting[i] == 0 {
			*ready = append(*ready, i)
		}
	}
	heap.Init(ready)
	c.order = make([]int, 0, n)
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		c.order = append(c.order, i)
		for _, ch := range c.children[i] {
			if waiting[ch]--; waiting[ch] == 0 {
				heap.Push(ready, ch)
			}
		}
	}
	if len(c.order) < n {
		c.reportCycles()
	}
}

// intHeap is a min-heap of node positions.
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// reportCycles runs an iterative depth-first search and reports the cycle closed by each back
// edge. Every cycle has a back edge and each back edge closes a different cycle, so each cycle
// reported is distinct (never the same loop from another starting node).
func (c *checker) reportCycles() {
	const white, grey, black = 0, 1, 2
	n := len(c.d.Nodes)
	color := make([]byte, n)
	stackPos := make([]int, n) // position of a grey node on the path
	var path []int             // the current DFS path
	var next []int             // next child index to visit, per path entry
	found := 0
	for root := 0; root < n && found < maxCycles; root++ {
		if color[root] != white {
			continue
		}
		color[root], stackPos[root] = grey, 0
		path, next = append(path[:0], root), append(next[:0], 0)
		for len(path) > 0 && found < maxCycles {
			top := len(path) - 1
			u := path[top]
			if next[top] == len(c.children[u]) {
				color[u] = black
				path, next = path[:top], next[:top]
				continue
			}
			v := c.children[u][next[top]]
			next[top]++
			switch color[v] {
			case white:
				color[v], stackPos[v] = grey, len(path)
				path, next = append(path, v), append(next, 0)
			case grey:
				c.reportCycle(path[stackPos[v]:])
				found++
			}
		}
	}
}

// reportCycle reports a cycle given in flow order (each node is a parent of the next, the last
// a parent of the first). It is rotated to start at its smallest position, and the problem sits
// on that node's depends_on entry that closes the loop.
func (c *checker) reportCycle(cycle []int) {
	start := 0
	for k, v := range cycle {
		if v < cycle[start] {
			start = k
		}
	}
	rotated := append(append([]int{}, cycle[start:]...), cycle[:start]...)
	first, last := rotated[0], rotated[len(rotated)-1]
	k := 0
	for j, p := range c.parents[first] {
		if p == last {
			k = c.depAt[first][j]
		}
	}
	names := make([]string, 0, len(rotated)+1)
	for _, v := range rotated {
		names = append(names, c.d.Nodes[v].ID)
	}
	names = append(names, c.d.Nodes[first].ID)
	c.probs.add(depPath(first, k), "cycle: %s", joinCycle(names))
}

// maxCycleNames bounds how many ids a cycle message lists.
const maxCycleNames = 40

// joinCycle joins ids with " -> ", eliding the middle of very long cycles.
func joinCycle(names []string) string {
	if len(names) <= maxCycleNames {
		return strings.Join(names, " -> ")
	}
	head, tail := names[:maxCycleNames/2], names[len(names)-maxCycleNames/2:]
	skipped := len(names) - len(head) - len(tail)
	return fmt.Sprintf("%s -> ... (%d more) -> %s", strings.Join(head, " -> "), skipped, strings.Join(tail, " -> "))
}
