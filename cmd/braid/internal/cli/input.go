package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxInputFile bounds what --input-json @FILE reads (the api refuses
// bodies over 1 MiB anyway).
const maxInputFile = 4 << 20

// inputJSON resolves --input-json: "@path" is the file's contents, "@-"
// standard input, anything else the text itself.
func (a *app) inputJSON(v string) (string, error) {
	path, ok := strings.CutPrefix(v, "@")
	if !ok {
		return v, nil
	}
	var r io.Reader
	if path == "-" {
		r = a.in
	} else {
		f, err := os.Open(path)
		if err != nil {
			return "", usageErrorf("--input-json @%s: %v", path, err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInputFile+1))
	if err != nil {
		return "", usageErrorf("--input-json @%s: %v", path, err)
	}
	if len(b) > maxInputFile {
		return "", usageErrorf("--input-json @%s: larger than %d MiB", path, maxInputFile>>20)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", usageErrorf("--input-json @%s: empty; want a JSON object", path)
	}
	return string(b), nil
}

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
