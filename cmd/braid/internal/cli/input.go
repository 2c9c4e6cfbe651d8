package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// buildInput merges --input-json (a JSON object, the base) with --input
// k=v pairs (which override it). A value that is valid JSON other than a
// bare string (a number, true/false, null, an object or an array) keeps
// its type; anything else is a string. Keys must be non-empty.
func buildInput(inputJSON string, pairs []string) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if strings.TrimSpace(inputJSON) != "" {
		dec := json.NewDecoder(strings.NewReader(inputJSON))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil || obj == nil {
			return nil, usageErrorf("--input-json: want a JSON object, e.g. '{\"date\":\"2026-01-01\"}'")
		}
	}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usageErrorf("--input %q: want key=value", p)
		}
		obj[k] = inputValue(v)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode input: %w", err)
	}
	return b, nil
}

// inputValue types v as JSON when it is a JSON number, literal, object or
// array; otherwise it is the string v.
func inputValue(v string) json.RawMessage {
	t := strings.TrimSpace(v)
	if t != "" && t[0] != '"' && json.Valid([]byte(t)) {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(t)) == nil {
			return buf.Bytes()
		}
	}
	s, _ := json.Marshal(v)
	return s
}
