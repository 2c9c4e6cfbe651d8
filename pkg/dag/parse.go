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
	p := &parser{valid: json.Valid(data)}
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
	// valid says the whole input is valid JSON: objects and arrays are then split by following
	// their structure (splitObject, splitArray), without json.Unmarshal's validating scans of
	// every level again. Invalid input takes json.Unmarshal's path everywhere, whose errors
	// name the problem.
	valid bool
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
	p.fields(top, "$", func(key string) any {
		switch key {
		case "name":
			return &d.Name
		case "description":
			return &d.Description
		case "inputs":
			return &inputs
		case "concurrency":
			return &d.Concurrency
		case "timeout":
			return &d.Timeout
		case "nodes":
			return &nodes
		}
		return nil
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
			p.fields(spec, ipath, func(key string) any {
				switch key {
				case "type":
					return &in.Type
				case "default":
					return &in.Default
				case "required":
					return &in.Required
				case "description":
					return &in.Description
				}
				return nil
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
	items, ok := []json.RawMessage(nil), false
	if p.valid && fastPaths {
		items, ok = splitArray(raw)
	}
	if !ok {
		if err := json.Unmarshal(raw, &items); err != nil {
			p.probs.add(path, "%s", decodeMessage(raw, err, "an array of nodes"))
			return nil
		}
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
	p.fields(obj, path, func(key string) any {
		switch key {
		case "id":
			return &n.ID
		case "handler":
			return &n.Handler
		case "config":
			return &n.Config
		case "depends_on":
			return &n.DependsOn
		case "trigger_rule":
			return &n.TriggerRule
		case "when":
			return &n.When
		case "retry":
			return &retry
		case "timeout":
			return &n.Timeout
		case "heartbeat_timeout":
			return &n.HeartbeatTimeout
		case "parallel":
			return &n.Parallel
		case "foreach":
			return &n.Foreach
		case "concurrency":
			return &n.Concurrency
		}
		return nil
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
	p.fields(obj, path, func(key string) any {
		switch key {
		case "max_attempts":
			return &r.MaxAttempts
		case "backoff":
			return &r.Backoff
		case "initial_interval":
			return &r.InitialInterval
		case "max_interval":
			return &r.MaxInterval
		case "multiplier":
			return &r.Multiplier
		case "jitter":
			return &r.Jitter
		}
		return nil
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
