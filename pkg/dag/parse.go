package dag

import (
	"encoding/json"
	"slices"
)

// Parse decodes, normalises and validates a definition from untrusted JSON. It rejects input
// over MaxDefinitionBytes, rewrites the seed formats (see the package doc), reports unknown
// fields, and runs the checks of Validate. On failure it returns a nil Definition and a
// *ValidationError listing every problem.
func Parse(data []byte) (*Definition, error) {
	if len(data) > MaxDefinitionBytes {
		var ps problems
		ps.add("$", "definition is %d bytes; the limit is %d", len(data), MaxDefinitionBytes)
		return nil, ps.err()
	}
	p := &parser{}
	d := p.definition(data)
	if d == nil {
		return nil, p.probs.err()
	}
	covered := p.paths()
	for _, vp := range check(d).probs {
		if !coveredBy(vp.Path, covered) {
			p.probs = append(p.probs, vp)
		}
	}
	if err := p.probs.err(); err != nil {
		return nil, err
	}
	return d, nil
}

// parser decodes a definition field by field so that every problem has an exact path.
type parser struct {
	probs problems
}

// definition decodes the top-level object; nil means the input was not a JSON object.
func (p *parser) definition(data []byte) *Definition {
	top, ok := p.object(data, "$")
	if !ok {
		return nil
	}
	normalizeTop(top)
	d := &Definition{}
	var inputs, nodes json.RawMessage
	p.fields(top, "$", map[string]any{
		"name": &d.Name, "description": &d.Description, "inputs": &inputs,
		"concurrency": &d.Concurrency, "timeout": &d.Timeout, "nodes": &nodes,
	})
	d.Inputs = p.inputs(inputs, "$.inputs")
	d.Nodes = p.nodes(nodes, "$.nodes")
	return d
}

// inputs decodes the inputs object; absent or null gives nil.
func (p *parser) inputs(raw json.RawMessage, path string) map[string]InputSpec {
	obj, ok := p.optionalObject(raw, path)
	if !ok || len(obj) == 0 {
		return nil
	}
	out := make(map[string]InputSpec, len(obj))
	for _, name := range sortedKeys(obj) {
		var in InputSpec
		ipath := keyPath(path, name)
		if spec, ok := p.object(obj[name], ipath); ok {
			p.fields(spec, ipath, map[string]any{
				"type": &in.Type, "default": &in.Default, "required": &in.Required, "description": &in.Description,
			})
		}
		out[name] = in
	}
	return out
}

// nodes decodes the node array. A node that is not an object stays as a zero Node so that
// positions, and so paths, are preserved.
func (p *parser) nodes(raw json.RawMessage, path string) []Node {
	if isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		p.probs.add(path, "%s", decodeMessage(raw, err, "an array of nodes"))
		return nil
	}
	if len(items) > MaxNodes {
		p.probs.add(path, "workflow has %d nodes; the limit is %d", len(items), MaxNodes)
		return nil
	}
	out := make([]Node, len(items))
	for i, item := range items {
		p.node(item, nodePath(i), &out[i])
	}
	return out
}

// node decodes one node object into n.
func (p *parser) node(raw json.RawMessage, path string, n *Node) {
	obj, ok := p.object(raw, path)
	if !ok {
		return
	}
	normalizeNode(obj, path, &p.probs)
	var retry json.RawMessage
	p.fields(obj, path, map[string]any{
		"id": &n.ID, "handler": &n.Handler, "config": &n.Config, "depends_on": &n.DependsOn,
		"trigger_rule": &n.TriggerRule, "when": &n.When, "retry": &retry, "timeout": &n.Timeout,
		"heartbeat_timeout": &n.HeartbeatTimeout, "parallel": &n.Parallel, "foreach": &n.Foreach,
		"concurrency": &n.Concurrency,
	})
	n.Retry = p.retry(retry, path+".retry")
}

// retry decodes a retry policy; absent or null gives nil.
func (p *parser) retry(raw json.RawMessage, path string) *RetryPolicy {
	obj, ok := p.optionalObject(raw, path)
	if !ok {
		return nil
	}
	r := &RetryPolicy{}
	p.fields(obj, path, map[string]any{
		"max_attempts": &r.MaxAttempts, "backoff": &r.Backoff, "initial_interval": &r.InitialInterval,
		"max_interval": &r.MaxInterval, "multiplier": &r.Multiplier, "jitter": &r.Jitter,
	})
	return r
}

// paths returns the set of paths the parser already reported.
func (p *parser) paths() map[string]bool {
	set := make(map[string]bool, len(p.probs))
	for _, pr := range p.probs {
		set[pr.Path] = true
	}
	return set
}

// coveredBy reports whether path, or a path above it, is in set: a value that failed to decode
// is not reported again by validation.
func coveredBy(path string, set map[string]bool) bool {
	if len(set) == 0 {
		return false
	}
	for i := len(path); i > 0; i-- {
		if (i == len(path) || path[i] == '.' || path[i] == '[') && set[path[:i]] {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
