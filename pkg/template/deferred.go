package template

import (
	"fmt"
	"strconv"
	"strings"
)

// Deferred templates are resolved by someone other than the caller of
// Resolve, later, from values the caller must never see: the orchestrator
// resolves a node's config but leaves `<< secret.NAME >>` to the worker that
// runs the task. ResolveDeferring does not hand the worker a template to
// parse (text substituted from run input or outputs could then forge one);
// it hands it Slots: for each string holding a deferred template, where the
// string is and the already-resolved text around each reference.

// Part is one piece of a Slot's string: resolved text, or (Ref set) the
// name a deferred template references.
type Part struct {
	Text string
	Ref  string
}

// Slot is a string of a resolved value that holds deferred templates. Path
// is the string's location as JSON Pointer reference tokens (RFC 6901,
// unescaped: object keys, array indexes in decimal); the resolved value
// holds "" there until Fill joins Parts.
type Slot struct {
	Path  []string
	Parts []Part
}

// Pointer returns the slot's path as a JSON Pointer string ("/a/0/b").
func (s Slot) Pointer() string {
	var b strings.Builder
	for _, tok := range s.Path {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
}

// ParsePointer splits a JSON Pointer string into unescaped reference tokens.
func ParsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("JSON pointer %q does not start with /", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		toks[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
	}
	return toks, nil
}

// DeferredNames returns the names that the templates of root deferred in s
// reference, in order, checking their form: a deferred template is exactly
// `<< root.NAME >>`, NAME an identifier, with no index and no filters (it
// stands for an opaque value the resolver cannot look into).
func DeferredNames(s, deferred string) ([]string, error) {
	pieces, err := parse(s)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range pieces {
		if p.tmpl == nil || p.tmpl.root != deferred {
			continue
		}
		name, err := deferredName(p.tmpl)
		if err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// deferredName checks e's form and returns the name it references.
func deferredName(e *expr) (string, error) {
	if len(e.steps) != 1 || e.steps[0].isIdx || len(e.filters) > 0 {
		return "", &Error{Template: e.raw, Root: e.root, Path: e.root,
			Reason: fmt.Sprintf("write it as << %s.NAME >>, with no index or filter", e.root)}
	}
	return e.steps[0].key, nil
}

// ResolveDeferring is Resolve, except that templates of root deferred stay
// unresolved: every string holding one is "" in the result and described by
// a Slot instead, its other templates resolved against scope and rendered
// as text (a string that is exactly one deferred template is its value, a
// string). Slots come in the order Resolve would meet their strings (map
// keys sorted).
func ResolveDeferring(v any, scope Scope, deferred string) (any, []Slot, error) {
	d := &deferrer{scope: scope, root: deferred}
	out, err := d.resolve(v)
	return out, d.slots, err
}

type deferrer struct {
	scope Scope
	root  string
	path  []string
	slots []Slot
}

func (d *deferrer) resolve(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return d.str(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := d.at(strconv.Itoa(i), e)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			r, err := d.at(k, x[k])
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}

// at resolves v found under reference token tok.
func (d *deferrer) at(tok string, v any) (any, error) {
	d.path = append(d.path, tok)
	defer func() { d.path = d.path[:len(d.path)-1] }()
	return d.resolve(v)
}

// str resolves s, or records it as a Slot when it holds a deferred template.
func (d *deferrer) str(s string) (any, error) {
	pieces, err := parse(s)
	if err != nil {
		return nil, err
	}
	var parts []Part
	var text strings.Builder
	deferredSeen := false
	for _, p := range pieces {
		switch {
		case p.tmpl == nil:
			text.WriteString(p.lit)
		case p.tmpl.root == d.root:
			name, err := deferredName(p.tmpl)
			if err != nil {
				return nil, err
			}
			if text.Len() > 0 {
				parts = append(parts, Part{Text: text.String()})
				text.Reset()
			}
			parts, deferredSeen = append(parts, Part{Ref: name}), true
		default:
			t, err := renderTemplate(p.tmpl, d.scope)
			if err != nil {
				return nil, err
			}
			text.WriteString(t)
		}
	}
	if !deferredSeen {
		return ResolveString(s, d.scope)
	}
	if text.Len() > 0 {
		parts = append(parts, Part{Text: text.String()})
	}
	d.slots = append(d.slots, Slot{Path: append([]string(nil), d.path...), Parts: parts})
	return "", nil
}

// Fill sets each slot's string in v (a decoded JSON value, mutated in
// place) to its parts joined, a Ref part replaced by lookup's value. v may
// itself be the slot's string (an empty Path); the filled value is returned.
// A path that does not lead to a string of v, or a name lookup does not
// know, is an error naming it.
func Fill(v any, slots []Slot, lookup func(name string) (string, bool)) (any, error) {
	for _, s := range slots {
		var b strings.Builder
		for _, p := range s.Parts {
			if p.Ref == "" {
				b.WriteString(p.Text)
				continue
			}
			val, ok := lookup(p.Ref)
			if !ok {
				return nil, &MissingError{Name: p.Ref}
			}
			b.WriteString(val)
		}
		var err error
		if v, err = setString(v, s.Path, b.String()); err != nil {
			return nil, fmt.Errorf("slot %s: %w", s.Pointer(), err)
		}
	}
	return v, nil
}

// MissingError is a deferred name that Fill's lookup does not know.
type MissingError struct{ Name string }

func (e *MissingError) Error() string { return fmt.Sprintf("%q is not defined", e.Name) }

// setString replaces the string at path in v with s.
func setString(v any, path []string, s string) (any, error) {
	if len(path) == 0 {
		if _, ok := v.(string); !ok {
			return nil, fmt.Errorf("not a string but %s", typeName(v))
		}
		return s, nil
	}
	tok, rest := path[0], path[1:]
	switch x := v.(type) {
	case map[string]any:
		e, ok := x[tok]
		if !ok {
			return nil, fmt.Errorf("no key %q", tok)
		}
		r, err := setString(e, rest, s)
		if err != nil {
			return nil, err
		}
		x[tok] = r
		return x, nil
	case []any:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(x) || strconv.Itoa(i) != tok {
			return nil, fmt.Errorf("no index %q in an array of %d", tok, len(x))
		}
		r, err := setString(x[i], rest, s)
		if err != nil {
			return nil, err
		}
		x[i] = r
		return x, nil
	}
	return nil, fmt.Errorf("%q leads into %s", tok, typeName(v))
}
