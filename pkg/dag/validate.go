package dag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/expr-lang/expr/vm"
)

// Validate checks d and returns a *ValidationError listing every problem with its JSON path, or
// nil. An unknown handler is not a problem: custom workers may offer any handler.
func (d *Definition) Validate() error {
	return check(d).probs.err()
}

// checker holds what validation learns about a definition; Compile turns it into a Graph.
type checker struct {
	d        *Definition
	probs    problems
	index    map[string]int // node id → first position
	parents  [][]int
	depAt    [][]int // depAt[i][k]: position in d.Nodes[i].DependsOn of parents[i][k]
	children [][]int
	order    []int
	refs     [][]string
	isParent []int // isParent[p] == i+1 while checking node i's templates and p is its parent
	when     []*vm.Program
	near     map[string]string // nearestRoot's answers, per unknown root
}

// check runs every validation. Graph-wide checks run only when the node count is within limits.
func check(d *Definition) *checker {
	c := &checker{d: d}
	c.checkTop()
	n := len(d.Nodes)
	if n == 0 || n > MaxNodes {
		return c
	}
	c.indexNodes()
	c.refs = make([][]string, n)
	c.when = make([]*vm.Program, n)
	for i := range d.Nodes {
		c.checkNode(i)
	}
	c.linkNodes()
	c.sortNodes()
	c.checkTemplates()
	return c
}

// checkTop checks the workflow-level fields.
func (c *checker) checkTop() {
	d := c.d
	switch {
	case d.Name == "":
		c.probs.add("$.name", "name is required")
	case !validName(d.Name):
		c.probs.add("$.name", "name %q must match [a-z0-9][a-z0-9_.-]{0,63}", d.Name)
	}
	c.nonNegative("$", "concurrency", d.Concurrency)
	c.duration("$", "timeout", d.Timeout)
	for _, name := range sortedKeys(d.Inputs) {
		c.checkInput(name, d.Inputs[name])
	}
	switch n := len(d.Nodes); {
	case n == 0:
		c.probs.add("$.nodes", "workflow has no nodes")
	case n > MaxNodes:
		c.probs.add("$.nodes", "workflow has %d nodes; the limit is %d", n, MaxNodes)
	}
}

// inputTypes are the accepted InputSpec.Type values.
var inputTypes = []string{"", "any", "string", "number", "integer", "boolean", "object", "array"}

// checkInput checks one declared input.
func (c *checker) checkInput(name string, in InputSpec) {
	path := keyPath("$.inputs", name)
	if !validID(name) {
		c.probs.add(path, "input name %q must match [A-Za-z0-9_-]{1,64}", name)
	}
	if !slices.Contains(inputTypes, in.Type) {
		c.probs.add(path+".type", "unknown input type %q (want one of %s)", in.Type, strings.Join(inputTypes[1:], ", "))
		return
	}
	if len(in.Default) == 0 {
		return
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(in.Default))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		c.probs.add(path+".default", "default is not valid JSON: %v", err)
		return
	}
	if !jsonHasType(v, in.Type) {
		c.probs.add(path+".default", "default %s is not of type %s", describe(in.Default), in.Type)
	}
}

// jsonHasType reports whether a decoded JSON value (numbers as json.Number) fits an input type.
func jsonHasType(v any, typ string) bool {
	switch x := v.(type) {
	case string:
		return typ == "" || typ == "any" || typ == "string"
	case json.Number:
		_, err := x.Int64()
		return typ == "" || typ == "any" || typ == "number" || (typ == "integer" && err == nil)
	case bool:
		return typ == "" || typ == "any" || typ == "boolean"
	case map[string]any:
		return typ == "" || typ == "any" || typ == "object"
	case []any:
		return typ == "" || typ == "any" || typ == "array"
	}
	return true // null fits every type
}

// nonNegative reports a negative v at parent.field.
func (c *checker) nonNegative(parent, field string, v int) {
	if v < 0 {
		c.probs.add(parent+"."+field, "%s must not be negative, got %d", field, v)
	}
}

// duration reports a negative v at parent.field.
func (c *checker) duration(parent, field string, v Duration) {
	if v < 0 {
		c.probs.add(parent+"."+field, "%s must not be negative, got %s", field, v)
	}
}

// indexNodes maps each id to its first position and reports bad and duplicate ids.
func (c *checker) indexNodes() {
	c.index = make(map[string]int, len(c.d.Nodes))
	for i, n := range c.d.Nodes {
		first, dup := c.index[n.ID]
		if msg := idProblem(n.ID, first, dup); msg != "" {
			c.probs.add(nodePath(i)+".id", "%s", msg)
		}
		if !dup && n.ID != "" {
			c.index[n.ID] = i
		}
	}
}

// idProblem says what is wrong with a node id, or returns "".
func idProblem(id string, first int, dup bool) string {
	switch {
	case id == "":
		return "id is required"
	case !validID(id):
		return fmt.Sprintf("id %q must match [A-Za-z0-9_-]{1,64}", id)
	case reservedRoot(id):
		return fmt.Sprintf("id %q is reserved for templates (input, run, item, index, count, secret)", id)
	case dup:
		return fmt.Sprintf("duplicate id %q (first used at %s)", id, nodePath(first))
	}
	return ""
}
