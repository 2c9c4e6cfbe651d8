package template

import (
	"encoding/json"
	"slices"
)

// Roots returns the distinct root names (node ids, "input", "run", "item", "index", "count")
// referenced by every template in s, in first-appearance order, or an error (a *SyntaxError)
// describing the first malformed template.
func Roots(s string) ([]string, error) {
	pieces, err := parse(s)
	if err != nil {
		return nil, err
	}
	var roots []string
	for _, p := range pieces {
		if p.tmpl != nil && !slices.Contains(roots, p.tmpl.root) {
			roots = append(roots, p.tmpl.root)
		}
	}
	return roots, nil
}

// RootsJSON walks a decoded JSON value (map[string]any, []any, string, json.Number, float64, bool,
// nil) and returns the union of Roots over every string in it, in first-appearance order (map
// entries are visited in sorted key order). Keys are not templates.
func RootsJSON(v any) ([]string, error) {
	var roots []string
	err := walkStrings(v, func(s string) error {
		found, err := Roots(s)
		for _, r := range found {
			if !slices.Contains(roots, r) {
				roots = append(roots, r)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return roots, nil
}

// walkStrings calls fn on every string value inside v, maps in sorted key order.
func walkStrings(v any, fn func(string) error) error {
	switch x := v.(type) {
	case string:
		return fn(x)
	case []any:
		for _, e := range x {
			if err := walkStrings(e, fn); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if err := walkStrings(x[k], fn); err != nil {
				return err
			}
		}
	case json.Number, float64, bool, nil:
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
