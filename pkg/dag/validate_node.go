package dag

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/expr-lang/expr"
)

// checkNode checks the fields of node i that need no other node.
func (c *checker) checkNode(i int) {
	n := &c.d.Nodes[i]
	if n.Handler == "" {
		c.probs.add(nodePath(i)+".handler", "handler is required")
	}
	if !n.TriggerRule.Valid() {
		c.probs.add(nodePath(i)+".trigger_rule", "unknown trigger rule %q (want one of %s)", n.TriggerRule, ruleList())
	}
	if n.When != "" {
		c.compileWhen(i, nodePath(i)+".when")
	}
	if n.Retry != nil {
		c.checkRetry(n.Retry, nodePath(i)+".retry")
	}
	if n.Timeout < 0 || n.HeartbeatTimeout < 0 || n.Concurrency < 0 {
		c.duration(nodePath(i), "timeout", n.Timeout)
		c.duration(nodePath(i), "heartbeat_timeout", n.HeartbeatTimeout)
		c.nonNegative(nodePath(i), "concurrency", n.Concurrency)
	}
	if n.Foreach != "" || len(n.Parallel) > 0 {
		c.checkFanOut(n, nodePath(i))
	}
	c.checkBuiltin(n, nodePath(i))
}

func ruleList() string {
	names := make([]string, len(TriggerRules))
	for i, r := range TriggerRules {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// MaxWhenBytes bounds a `when` expression. The expression compiler is recursive, so this also
// bounds its stack depth: a long chain of "!" would otherwise overflow the stack.
const MaxWhenBytes = 4096

// compileWhen compiles node i's condition once; Graph.When keeps the program.
func (c *checker) compileWhen(i int, path string) {
	if n := len(c.d.Nodes[i].When); n > MaxWhenBytes {
		c.probs.add(path, "when expression is %d bytes; the limit is %d", n, MaxWhenBytes)
		return
	}
	prog, err := expr.Compile(c.d.Nodes[i].When, expr.AllowUndefinedVariables(), expr.AsBool())
	if err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		c.probs.add(path, "invalid when expression: %s", msg)
		return
	}
	c.when[i] = prog
}

// checkRetry checks a retry policy.
func (c *checker) checkRetry(r *RetryPolicy, path string) {
	if r.MaxAttempts < 1 || r.MaxAttempts > MaxRetryAttempts {
		c.probs.add(path+".max_attempts", "max_attempts must be from 1 to %d, got %d", MaxRetryAttempts, r.MaxAttempts)
	}
	if r.Backoff != "" && r.Backoff != BackoffFixed && r.Backoff != BackoffExponential {
		c.probs.add(path+".backoff", "unknown backoff %q (want fixed or exponential)", r.Backoff)
	}
	c.duration(path, "initial_interval", r.InitialInterval)
	c.duration(path, "max_interval", r.MaxInterval)
	if r.MaxInterval > 0 && r.MaxInterval < r.InitialInterval {
		c.probs.add(path+".max_interval", "max_interval %s is less than initial_interval %s", r.MaxInterval, r.InitialInterval)
	}
	if r.Multiplier != 0 && !(r.Multiplier >= 1) {
		c.probs.add(path+".multiplier", "multiplier must be at least 1, got %g", r.Multiplier)
	}
	if !(r.Jitter >= 0 && r.Jitter <= 1) {
		c.probs.add(path+".jitter", "jitter must be from 0 to 1, got %g", r.Jitter)
	}
}

// checkFanOut checks the shape of foreach and parallel; their templates are checked with the
// rest in checkTemplates.
func (c *checker) checkFanOut(n *Node, path string) {
	if n.Foreach != "" && len(n.Parallel) > 0 {
		c.probs.add(path+".parallel", "foreach and parallel cannot be used together")
	}
	if n.Foreach != "" && !strings.Contains(n.Foreach, "<<") {
		c.probs.add(path+".foreach", `foreach must be a template such as "<< node.items >>", got %q`, n.Foreach)
	}
	if len(n.Parallel) == 0 {
		return
	}
	switch count, ok := parallelCount(n.Parallel); {
	case !ok:
		c.probs.add(path+".parallel", "parallel must be a positive integer or a template, got %s", describe(n.Parallel))
	case count > MaxFanOut:
		c.probs.add(path+".parallel", "parallel is %d instances; the limit is %d", count, MaxFanOut)
	}
}

// parallelCount reports whether raw is a positive integer (returned) or a
// string holding a template (count 0: known at run time).
func parallelCount(raw json.RawMessage) (count int64, ok bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return 0, false
	}
	switch x := v.(type) {
	case json.Number:
		i, err := x.Int64()
		return i, err == nil && i > 0
	case string:
		return 0, strings.Contains(x, "<<")
	}
	return 0, false
}

// linkNodes resolves depends_on into parent and child positions, reporting unknown, self and
// repeated dependencies.
func (c *checker) linkNodes() {
	n := len(c.d.Nodes)
	c.parents, c.depAt, c.children = make([][]int, n), make([][]int, n), make([][]int, n)
	linked := make([]int, n) // linked[p] == i+1 once p is a parent of i
	for i, node := range c.d.Nodes {
		for k, dep := range node.DependsOn {
			p, ok := c.index[dep]
			switch {
			case !ok:
				c.probs.add(depPath(i, k), "unknown node %q", dep)
			case p == i:
				c.probs.add(depPath(i, k), "node %q depends on itself", dep)
			case linked[p] == i+1:
				c.probs.add(depPath(i, k), "duplicate dependency %q", dep)
			default:
				linked[p] = i + 1
				c.parents[i] = append(c.parents[i], p)
				c.depAt[i] = append(c.depAt[i], k)
				c.children[p] = append(c.children[p], i)
			}
		}
	}
}

// depPath is the path of node i's k-th dependency.
func depPath(i, k int) string { return indexPath(nodePath(i)+".depends_on", k) }
