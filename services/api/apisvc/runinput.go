package apisvc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/braidhq/braid/pkg/dag"
)

// checkInput validates a run input against a definition's declared inputs
// and returns it as a compact JSON object. raw may be empty or null (no
// input). It reports every problem at once, each at "$.input.NAME":
// required inputs that are missing or null, values of the wrong type, and,
// when the definition declares inputs, names it does not declare. A
// definition that declares none accepts any object.
func checkInput(specs map[string]dag.InputSpec, raw []byte) ([]byte, []FieldError) {
	values, problem := inputObject(raw)
	if problem != nil {
		return nil, []FieldError{*problem}
	}
	var errs []FieldError
	for _, name := range sortedNames(specs) {
		spec := specs[name]
		v, ok := values[name]
		switch {
		case !ok && spec.Required && len(spec.Default) == 0:
			errs = append(errs, FieldError{Path: inputPath(name), Message: fmt.Sprintf("required input %q is missing", name)})
		case ok && v == nil && spec.Required:
			errs = append(errs, FieldError{Path: inputPath(name), Message: fmt.Sprintf("required input %q must not be null", name)})
		case ok && !hasType(v, spec.Type):
			errs = append(errs, FieldError{Path: inputPath(name), Message: fmt.Sprintf("input %q must be %s, got %s", name, typeWord(spec.Type), kindOf(v))})
		}
	}
	if len(specs) > 0 {
		for _, name := range sortedNames(values) {
			if _, ok := specs[name]; !ok {
				errs = append(errs, FieldError{Path: inputPath(name), Message: fmt.Sprintf("unknown input %q; the workflow declares %s", name, strings.Join(sortedNames(specs), ", "))})
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if values == nil {
		return []byte("{}"), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, []FieldError{{Path: "$.input", Message: "input is not valid JSON: " + err.Error()}}
	}
	if buf.Len() > MaxInputBytes {
		return nil, []FieldError{{Path: "$.input", Message: fmt.Sprintf("the input is %d bytes of JSON; a run input may be at most %d (512 KiB): pass large data by reference (a URL, a key)", buf.Len(), MaxInputBytes)}}
	}
	return buf.Bytes(), nil
}

// MaxInputBytes bounds a run's input (compact JSON): it travels in one
// Kafka record (at most 1 MiB) and is loaded with the run by every owner.
const MaxInputBytes = 512 << 10

// inputObject decodes raw as a JSON object (numbers as json.Number); empty
// or null is no input.
func inputObject(raw []byte) (map[string]any, *FieldError) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, &FieldError{Path: "$.input", Message: "input is not valid JSON"}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &FieldError{Path: "$.input", Message: "input must be a JSON object, got " + kindOf(v)}
	}
	return m, nil
}

// hasType reports whether a decoded value fits a declared input type; null
// fits every type (required inputs are checked separately).
func hasType(v any, typ string) bool {
	switch typ {
	case "", "any":
		return true
	}
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return typ == "string"
	case json.Number:
		if typ == "integer" {
			_, err := x.Int64()
			return err == nil
		}
		return typ == "number"
	case bool:
		return typ == "boolean"
	case map[string]any:
		return typ == "object"
	case []any:
		return typ == "array"
	}
	return false
}

// kindOf names a decoded value's JSON type.
func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "an integer"
		}
		return "a number"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// typeWord phrases an input type for messages.
func typeWord(typ string) string {
	switch typ {
	case "integer", "object", "array":
		return "an " + typ
	}
	return "a " + typ
}

func inputPath(name string) string {
	if nodeIDShape.MatchString(name) {
		return "$.input." + name
	}
	b, _ := json.Marshal(name)
	return "$.input[" + string(b) + "]"
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
