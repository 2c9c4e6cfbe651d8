package template

import (
	"fmt"
	"strings"
)

// Resolve returns a copy of the decoded JSON value v with every template in every string
// resolved against scope (map keys are left as they are). A string that is exactly one template
// becomes the referenced value with its JSON type; other strings are interpolated. v is never
// mutated. Errors are *SyntaxError or *Error.
func Resolve(v any, scope Scope) (any, error) {
	switch x := v.(type) {
	case string:
		return ResolveString(x, scope)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := Resolve(e, scope)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := Resolve(e, scope)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}

// ResolveString resolves the templates in s. When s is exactly one template (nothing outside its
// "<<" and ">>") the result is the referenced value with its JSON type; otherwise it is the
// interpolated string (see the package doc for how each type renders).
func ResolveString(s string, scope Scope) (any, error) {
	pieces, err := parse(s)
	if err != nil {
		return nil, err
	}
	if len(pieces) == 1 && pieces[0].tmpl != nil {
		return eval(pieces[0].tmpl, scope)
	}
	return interpolate(pieces, scope, func(s string) (string, error) { return s, nil })
}

// interpolate concatenates pieces, rendering each template's value with text and passing the
// result through quote (which may reject or transform it).
func interpolate(pieces []piece, scope Scope, quote func(string) (string, error)) (string, error) {
	var b strings.Builder
	for _, p := range pieces {
		if p.tmpl == nil {
			b.WriteString(p.lit)
			continue
		}
		s, err := renderTemplate(p.tmpl, scope)
		if err != nil {
			return "", err
		}
		if s, err = quote(s); err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// renderTemplate evaluates e and renders the value as text.
func renderTemplate(e *expr, scope Scope) (string, error) {
	v, err := eval(e, scope)
	if err != nil {
		return "", err
	}
	s, err := text(v)
	if err != nil {
		return "", e.fail(e.pathString(len(e.steps)), "", fmt.Sprintf("cannot render value: %v", err))
	}
	return s, nil
}
