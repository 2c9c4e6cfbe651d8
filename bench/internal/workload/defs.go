package workload

import (
	"encoding/json"
	"fmt"
)

// node is one node of a generated definition: mostly noop with no config,
// so outputs are null and Redis holds only the engine's own state.
type node struct {
	ID        string   `json:"id"`
	Handler   string   `json:"handler"`
	DependsOn []string `json:"depends_on,omitempty"`
	Foreach   string   `json:"foreach,omitempty"`
	Config    any      `json:"config,omitempty"`
}

// definition encodes a workflow named name with nodes.
func definition(name string, nodes []node) []byte {
	b, err := json.Marshal(map[string]any{"name": name, "nodes": nodes})
	if err != nil { // only strings and slices: cannot fail
		panic(err)
	}
	return b
}

// nodeID is the id of the i-th generated node.
func nodeID(i int) string { return fmt.Sprintf("n%d", i) }

// chainDef is n noop nodes, each depending on the one before.
func chainDef(name string, n int) []byte {
	nodes := make([]node, n)
	for i := range nodes {
		nodes[i] = node{ID: nodeID(i), Handler: "noop"}
		if i > 0 {
			nodes[i].DependsOn = []string{nodeID(i - 1)}
		}
	}
	return definition(name, nodes)
}

// fanOutDef is n nodes in all: a root, n-2 parallel nodes depending on it
// and a join depending on all of them (n ≥ 3). A 10-node fan-out is the
// benchmarks' "diamond".
func fanOutDef(name string, n int) []byte {
	n = max(n, 3)
	nodes := make([]node, 0, n)
	nodes = append(nodes, node{ID: "root", Handler: "noop"})
	mids := make([]string, 0, n-2)
	for i := range n - 2 {
		id := nodeID(i)
		mids = append(mids, id)
		nodes = append(nodes, node{ID: id, Handler: "noop", DependsOn: []string{"root"}})
	}
	nodes = append(nodes, node{ID: "join", Handler: "noop", DependsOn: mids})
	return definition(name, nodes)
}

// foreachDef makes a list of items with a transform node and maps a noop
// over it with foreach (SPEC §5): items+1 instances in all.
func foreachDef(name string, items int) []byte {
	return definition(name, []node{
		{ID: "items", Handler: "transform", Config: map[string]any{"jq": fmt.Sprintf("[range(%d)]", items)}},
		{ID: "each", Handler: "noop", DependsOn: []string{"items"}, Foreach: "<< items >>"},
	})
}

// foreachJoinDef is foreachDef followed by a noop join that depends on the
// foreach node (and reads nothing of it): items+2 completions in all.
func foreachJoinDef(name string, items int) []byte {
	return definition(name, []node{
		{ID: "items", Handler: "transform", Config: map[string]any{"jq": fmt.Sprintf("[range(%d)]", items)}},
		{ID: "each", Handler: "noop", DependsOn: []string{"items"}, Foreach: "<< items >>"},
		{ID: "join", Handler: "noop", DependsOn: []string{"each"}},
	})
}

// outputConfigExample is the config (and so the output) of a node of
// fanOutOutputsDef, for the method; ids differ by node.
const outputConfigExample = `{"node":"n123","ok":true}`

// fanOutOutputsDef is fanOutDef with every node a noop echoing a small
// JSON object as its output ({"node":<id>,"ok":true}), so the run's
// outputs hash holds real values.
func fanOutOutputsDef(name string, n int) []byte {
	n = max(n, 3)
	out := func(id string) map[string]any { return map[string]any{"node": id, "ok": true} }
	nodes := make([]node, 0, n)
	nodes = append(nodes, node{ID: "root", Handler: "noop", Config: out("root")})
	mids := make([]string, 0, n-2)
	for i := range n - 2 {
		id := nodeID(i)
		mids = append(mids, id)
		nodes = append(nodes, node{ID: id, Handler: "noop", DependsOn: []string{"root"}, Config: out(id)})
	}
	nodes = append(nodes, node{ID: "join", Handler: "noop", DependsOn: mids, Config: out("join")})
	return definition(name, nodes)
}
