package template

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// eval resolves one parsed template against scope, filters included.
func eval(e *expr, scope Scope) (any, error) {
	v, lookupErr := lookup(e, scope)
	for _, f := range e.filters {
		if f.name == "default" {
			if lookupErr != nil || v == nil {
				v, lookupErr = f.arg, nil
			}
			continue
		}
		if lookupErr != nil {
			continue // a later default may still supply a value
		}
		var err error
		path := e.pathString(len(e.steps))
		if v, err = applyFilter(f.name, v, path); err != nil {
			return nil, e.fail(path, "", fmt.Sprintf("filter %q: %v", f.name, err))
		}
	}
	if lookupErr != nil {
		return nil, lookupErr
	}
	return v, nil
}

// lookup walks e's path from its root.
func lookup(e *expr, scope Scope) (any, error) {
	v, ok := scope.Root(e.root)
	if !ok {
		return nil, e.fail(e.root, "", missingRoot(e.root, scope))
	}
	for i, st := range e.steps {
		var err error
		if v, err = walkStep(v, st, e.pathString(i)); err != nil {
			return nil, e.fail(e.pathString(i+1), stepKey(st), err.Error())
		}
	}
	return v, nil
}

// walkStep applies one path element to v; at names the path leading to v.
func walkStep(v any, st step, at string) (any, error) {
	if st.isIdx {
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("cannot index %s with [%d]: it is %s, not an array", at, st.index, typeName(v))
		}
		if st.index >= len(arr) {
			return nil, fmt.Errorf("index %d out of range in %s (length %d)", st.index, at, len(arr))
		}
		return arr[st.index], nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("cannot read key %q of %s: it is %s, not an object", st.key, at, typeName(v))
	}
	val, ok := obj[st.key]
	if !ok {
		return nil, fmt.Errorf("key %q not found in %s", st.key, at)
	}
	return val, nil
}

func missingRoot(root string, scope Scope) string {
	if reservedRoots[root] {
		return fmt.Sprintf("root %q is not set here", root)
	}
	if nc, ok := scope.(NodeChecker); ok && !nc.HasNode(root) {
		return fmt.Sprintf("unknown root %q", root)
	}
	return fmt.Sprintf("node %q has no output", root)
}

// applyFilter applies a non-default filter to v, the value at path.
func applyFilter(name string, v any, path string) (any, error) {
	switch name {
	case "json":
		return compactJSON(v)
	case "upper", "lower":
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s is %s, not a string", path, typeName(v))
		}
		if name == "upper" {
			return strings.ToUpper(s), nil
		}
		return strings.ToLower(s), nil
	case "length":
		return length(v, path)
	}
	return nil, fmt.Errorf("unknown filter") // unreachable: the parser rejects unknown filters
}

func length(v any, path string) (any, error) {
	switch x := v.(type) {
	case string:
		return json.Number(strconv.Itoa(utf8.RuneCountInString(x))), nil
	case []any:
		return json.Number(strconv.Itoa(len(x))), nil
	case map[string]any:
		return json.Number(strconv.Itoa(len(x))), nil
	}
	return nil, fmt.Errorf("%s is %s, which has no length", path, typeName(v))
}

// fail builds an *Error for e.
func (e *expr) fail(path, key, reason string) *Error {
	return &Error{Template: e.raw, Root: e.root, Path: path, Key: key, Reason: reason}
}

// pathString renders the root and the first n steps, e.g. "fetch.items[0]".
func (e *expr) pathString(n int) string {
	var b strings.Builder
	b.WriteString(e.root)
	for _, st := range e.steps[:n] {
		if st.isIdx {
			fmt.Fprintf(&b, "[%d]", st.index)
		} else {
			b.WriteString("." + st.key)
		}
	}
	return b.String()
}

func stepKey(st step) string {
	if st.isIdx {
		return strconv.Itoa(st.index)
	}
	return st.key
}

// typeName names v's JSON type with an article, e.g. "a string", "null".
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	if isNumber(v) {
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}
