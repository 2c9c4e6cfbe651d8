package template

// Scope supplies the values of template roots: node outputs by node id, and the reserved roots
// "input", "run", "item", "index" and "count". Root reports false when the root has no value; a
// present null is (nil, true). Implementations must be safe for the concurrent use their caller
// makes of them; Resolve only reads.
type Scope interface {
	Root(name string) (any, bool)
}

// NodeChecker is optionally implemented by a Scope that knows the workflow's node ids, so that
// a root that is neither reserved nor a node is reported as `unknown root "x"` rather than
// `node "x" has no output`.
type NodeChecker interface {
	HasNode(id string) bool
}

// MapScope is a Scope backed by a map from root name to value.
type MapScope map[string]any

// Root implements Scope.
func (m MapScope) Root(name string) (any, bool) {
	v, ok := m[name]
	return v, ok
}

// reservedRoots are the root names that are not node ids.
var reservedRoots = map[string]bool{"input": true, "run": true, "item": true, "index": true, "count": true}
