package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// DefaultHeartbeatTimeout applies to nodes that set none.
const DefaultHeartbeatTimeout = 30 * time.Second

// DeadlineGrace is how long after an attempt's timeout the orchestrator's
// backstop fails it, leaving the worker time to report its own timeout.
const DeadlineGrace = 5 * time.Second

// Plan is the immutable, precompiled form of one workflow version that every
// run of it shares: decoded configs, compiled `when` programs and the names
// they read. Safe for concurrent use.
type Plan struct {
	Graph *dag.Graph
	nodes []planNode
}

type planNode struct {
	config    any // decoded config (json.Number for numbers)
	when      *vm.Program
	whenNames []string // identifiers the when expression reads
	hasTmpl   bool     // config holds at least one template
	hasSecret bool     // config references a secret: the worker fills it in
}

// NewPlan prepares g for execution. It fails only if g holds something
// Validate should have rejected.
func NewPlan(g *dag.Graph) (*Plan, error) {
	p := &Plan{Graph: g, nodes: make([]planNode, len(g.Def.Nodes))}
	for i, n := range g.Def.Nodes {
		cfg := decodeJSON(n.Config)
		pn := planNode{config: cfg, hasTmpl: holdsMarker(cfg), hasSecret: slices.Contains(g.Refs[i], dag.RootSecret)}
		if prog := g.When[i]; prog != nil {
			pn.when, pn.whenNames = prog, identifiers(prog)
		}
		p.nodes[i] = pn
	}
	return p, nil
}

// identifiers lists the top-level names an expression reads.
func identifiers(p *vm.Program) []string {
	seen := map[string]bool{}
	var names []string
	ast.Find(p.Node(), func(n ast.Node) bool {
		if id, ok := n.(*ast.IdentifierNode); ok && !seen[id.Value] {
			seen[id.Value] = true
			names = append(names, id.Value)
		}
		return false
	})
	return names
}

// applyInputDefaults returns the run input with declared defaults filled in,
// or an error naming missing required inputs.
func (p *Plan) applyInputDefaults(input json.RawMessage) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(input)) > 0 && !bytes.Equal(bytes.TrimSpace(input), []byte("null")) {
		if err := json.Unmarshal(input, &m); err != nil {
			return nil, fmt.Errorf("input must be a JSON object: %w", err)
		}
	}
	for name, spec := range p.Graph.Def.Inputs {
		if _, ok := m[name]; ok {
			continue
		}
		switch {
		case len(spec.Default) > 0:
			m[name] = spec.Default
		case spec.Required:
			return nil, fmt.Errorf("missing required input %q", name)
		}
	}
	return json.Marshal(m)
}

func decodeJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil
	}
	return v
}

// decodeForExpr decodes JSON with float64 numbers, which expr compares natively.
func decodeForExpr(b json.RawMessage) any {
	var v any
	if len(b) == 0 || json.Unmarshal(b, &v) != nil {
		return nil
	}
	return v
}

// holdsMarker reports whether any string in a decoded JSON value contains
// "<<" (a template or an escaped literal). The raw bytes cannot tell: JSON
// may spell '<' as \u003c.
func holdsMarker(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, "<<")
	case []any:
		for _, e := range x {
			if holdsMarker(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if holdsMarker(e) {
				return true
			}
		}
	}
	return false
}
