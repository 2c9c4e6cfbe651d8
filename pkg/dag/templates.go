package dag

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/braidhq/braid/pkg/template"
)

// field says where in a node a template sits: fan-out roots are valid only in config.
type field int

const (
	inConfig field = iota
	inForeach
	inParallel
)

// String names the field as in JSON.
func (f field) String() string {
	return [...]string{"config", "foreach", "parallel"}[f]
}

// refSite is a template reference to a node that is not a parent, awaiting the ancestor check.
type refSite struct {
	node, target int
	path         string
}

// checkTemplates parses every template of every node, records each node's roots in c.refs and
// reports syntax errors, misplaced fan-out roots and references to nodes that are not ancestors.
func (c *checker) checkTemplates() {
	var far []refSite
	c.isParent = make([]int, len(c.d.Nodes))
	for i := range c.d.Nodes {
		far = c.nodeTemplates(i, far)
	}
	c.checkAncestry(far)
}

// nodeTemplates checks node i's templates (config, foreach, parallel), appending references to
// non-parent nodes to far.
func (c *checker) nodeTemplates(i int, far []refSite) []refSite {
	n := &c.d.Nodes[i]
	if len(n.Config) == 0 && n.Foreach == "" && len(n.Parallel) == 0 {
		return far
	}
	for _, p := range c.parents[i] {
		c.isParent[p] = i + 1
	}
	seen := map[string]bool{}
	visit := func(path func() string, s string, f field) {
		far = c.templateString(i, path, s, f, seen, far)
	}
	fixed := func(field string) func() string { return func() string { return nodePath(i) + field } }
	if len(n.Config) > 0 {
		c.configTemplates(i, func(path func() string, s string) { visit(path, s, inConfig) })
	}
	if n.Foreach != "" {
		visit(fixed(".foreach"), n.Foreach, inForeach)
	}
	var par string
	if len(n.Parallel) > 0 && json.Unmarshal(n.Parallel, &par) == nil {
		visit(fixed(".parallel"), par, inParallel)
	}
	return far
}

// configTemplates calls visit for every string in node i's config that may hold a template.
// Config without "<<" (raw or JSON-escaped) is only checked to be valid JSON.
func (c *checker) configTemplates(i int, visit func(path func() string, s string)) {
	raw := c.d.Nodes[i].Config
	if !bytes.Contains(raw, []byte("<<")) && !bytes.Contains(raw, []byte(`\u003c`)) && !bytes.Contains(raw, []byte(`\u003C`)) {
		if !json.Valid(raw) {
			c.probs.add(nodePath(i)+".config", "config is not valid JSON")
		}
		return
	}
	var cfg any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		c.probs.add(nodePath(i)+".config", "config is not valid JSON")
		return
	}
	w := &walker{segs: []string{nodePath(i), ".config"}}
	w.walk(cfg, func(s string) { visit(w.path, s) })
}

// templateString checks the templates in one string s, found at path().
func (c *checker) templateString(i int, path func() string, s string, f field, seen map[string]bool, far []refSite) []refSite {
	if !strings.Contains(s, "<<") {
		return far
	}
	roots, err := template.Roots(s)
	if err != nil {
		c.probs.add(path(), "%v", err)
		return far
	}
	if len(roots) > 0 && f == inConfig && c.d.Nodes[i].Handler == "transform" && path() == nodePath(i)+".config.jq" {
		// A substituted value would become jq code: the shell's quoting has no jq counterpart.
		c.probs.add(path(), `templates cannot be used in a jq program, where a value would become code: pass values in "input" (e.g. "input": {"name": "<< input.name >>"}) and read them as .name`)
		return far
	}
	for _, root := range roots {
		if root == RootSecret {
			c.checkSecret(i, path, s, f)
		}
		if !seen[root] {
			seen[root] = true
			c.refs[i] = append(c.refs[i], root)
		}
		far = c.checkRoot(i, path, root, f, far)
	}
	return far
}

// checkRoot checks one root referenced from node i.
func (c *checker) checkRoot(i int, path func() string, root string, f field, far []refSite) []refSite {
	n := &c.d.Nodes[i]
	switch root {
	case RootInput, RootRun:
		return far
	case RootSecret:
		return far // checkSecret checked it
	case RootItem, RootIndex, RootCount:
		switch {
		case f != inConfig:
			c.probs.add(path(), "%q cannot be used in %s: the fan-out defines it", root, f)
		case root == RootItem && n.Foreach == "":
			c.probs.add(path(), "%q is only available in foreach nodes", root)
		case !n.FanOut():
			c.probs.add(path(), "%q is only available in foreach or parallel nodes", root)
		}
		return far
	}
	p, ok := c.index[root]
	switch {
	case !ok:
		if near := c.nearestRoot(root); near != "" {
			c.probs.add(path(), "template references unknown node %q; did you mean %q?", root, near)
		} else {
			c.probs.add(path(), "template references unknown node %q", root)
		}
	case p == i:
		c.probs.add(path(), "template references node %q itself", root)
	case c.isParent[p] != i+1:
		far = append(far, refSite{node: i, target: p, path: path()})
	}
	return far
}

// checkSecret checks the secret templates in s, found at path() of node i:
// only in the config of a node a worker runs, never in a shell command
// (the process list would show the value: pass it in the node's env), each
// exactly << secret.NAME >>.
func (c *checker) checkSecret(i int, path func() string, s string, f field) {
	n := &c.d.Nodes[i]
	switch {
	case f != inConfig:
		c.probs.add(path(), "secrets cannot be used in %s, only in a node's config", f)
	case n.Handler == HandlerWait || n.Handler == HandlerApproval:
		c.probs.add(path(), "secrets cannot be used in the config of a %s node: no worker runs it", n.Handler)
	case n.Handler == "shell" && path() == nodePath(i)+".config.command":
		c.probs.add(path(), `secrets cannot be used in a shell command, where the process list would show them: set one in the node's env ("env": {"TOKEN": "<< secret.TOKEN >>"}) and use "$TOKEN"`)
	default:
		if _, err := template.DeferredNames(s, RootSecret); err != nil {
			c.probs.add(path(), "%v", err)
		}
	}
}

// checkAncestry reports the far references whose target is not an ancestor. Each referenced
// target gets a bit; ancestor sets are propagated in topological order 64 targets at a time, so
// time is O((nodes + edges) × targets/64) and memory one word per node. Nodes outside the order
// (on or after a cycle) are skipped: the cycle is reported already.
func (c *checker) checkAncestry(far []refSite) {
	if len(far) == 0 {
		return
	}
	n := len(c.d.Nodes)
	bitOf := make([]int, n) // bitOf[t] is target t's bit + 1, or 0
	targets := 0
	for _, r := range far {
		if bitOf[r.target] == 0 {
			targets++
			bitOf[r.target] = targets
		}
	}
	ok := make([]bool, len(far))
	anc := make([]uint64, n)
	for base := 0; base < targets; base += 64 {
		c.propagate(anc, bitOf, base)
		for k, r := range far {
			if b := bitOf[r.target] - 1 - base; b >= 0 && b < 64 && anc[r.node]&(1<<b) != 0 {
				ok[k] = true
			}
		}
	}
	sorted := make([]bool, n)
	for _, i := range c.order {
		sorted[i] = true
	}
	for k, r := range far {
		if !ok[k] && sorted[r.node] {
			c.probs.add(r.path, "template references node %q, which is not an ancestor of %q (add it to depends_on)",
				c.d.Nodes[r.target].ID, c.d.Nodes[r.node].ID)
		}
	}
}

// propagate sets anc[i] to the set of targets with bits base..base+63 that are ancestors of i.
func (c *checker) propagate(anc []uint64, bitOf []int, base int) {
	for _, i := range c.order {
		var w uint64
		for _, p := range c.parents[i] {
			w |= anc[p]
			if b := bitOf[p] - 1 - base; b >= 0 && b < 64 {
				w |= 1 << b
			}
		}
		anc[i] = w
	}
}

// walker visits every string inside a decoded JSON value, object keys in sorted order, keeping
// the path as segments so that it costs nothing until a problem needs it. Depth is bounded by
// the JSON decoder's nesting limit.
type walker struct {
	segs []string
}

// path returns the JSON path of the value being visited.
func (w *walker) path() string { return strings.Join(w.segs, "") }

func (w *walker) walk(v any, fn func(s string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for i, e := range x {
			w.segs = append(w.segs, indexPath("", i))
			w.walk(e, fn)
			w.segs = w.segs[:len(w.segs)-1]
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			w.segs = append(w.segs, keyPath("", k))
			w.walk(x[k], fn)
			w.segs = w.segs[:len(w.segs)-1]
		}
	}
}

// nearestRoot is the template root (a node id, or input, run, secret,
// item, index, count) that root most likely misspells: at most two edits
// away and closer than any other, or "" when none is.
func (c *checker) nearestRoot(root string) string {
	if near, ok := c.near[root]; ok {
		return near
	}
	if c.near == nil {
		c.near = map[string]string{}
	}
	if len(c.near) >= maxSuggested || len(root) > 64 {
		return "" // a definition full of unknown roots: no more suggestions than a reader needs
	}
	best, bestD, tie := "", 3, false
	try := func(cand string) {
		if len(cand)-len(root) > 2 || len(root)-len(cand) > 2 {
			return
		}
		d := editDistance(root, cand)
		if d > len(cand)/2 {
			return // "x" is one edit from "run" too, but no misspelling of it
		}
		switch {
		case d < bestD:
			best, bestD, tie = cand, d, false
		case d == bestD && cand != best:
			tie = true
		}
	}
	for _, r := range []string{RootInput, RootRun, RootSecret, RootItem, RootIndex, RootCount} {
		try(r)
	}
	for _, n := range c.d.Nodes {
		try(n.ID)
	}
	if tie {
		best = ""
	}
	c.near[root] = best
	return best
}

// maxSuggested bounds how many unknown roots nearestRoot looks at.
const maxSuggested = 32

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
