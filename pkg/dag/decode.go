package dag

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// object decodes raw as a JSON object, reporting a problem at path when it is anything else.
func (p *parser) object(raw []byte, path string) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	err := json.Unmarshal(raw, &obj)
	if err != nil || obj == nil {
		p.probs.add(path, "%s", decodeMessage(raw, err, "a JSON object"))
		return nil, false
	}
	return obj, true
}

// optionalObject is object for fields that may be absent or null (ok is then false, silently).
func (p *parser) optionalObject(raw json.RawMessage, path string) (map[string]json.RawMessage, bool) {
	if isNull(raw) {
		return nil, false
	}
	return p.object(raw, path)
}

// fields decodes each known key of obj into its destination in dst and reports every other key
// as an unknown field, in sorted key order.
func (p *parser) fields(obj map[string]json.RawMessage, path string, dst map[string]any) {
	for _, key := range sortedKeys(obj) {
		target, known := dst[key]
		if !known {
			p.probs.add(keyPath(path, key), "unknown field %q", key)
			continue
		}
		p.value(obj[key], keyPath(path, key), target)
	}
}

// value decodes raw into dst. Raw JSON destinations are compacted (null becomes absent) and
// string lists are decoded element by element so a bad element has its own path.
func (p *parser) value(raw json.RawMessage, path string, dst any) {
	switch dst := dst.(type) {
	case *json.RawMessage:
		*dst = compactRaw(raw)
		return
	case *[]string:
		*dst = p.stringList(raw, path)
		return
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		p.probs.add(path, "%s", decodeMessage(raw, err, want(dst)))
	}
}

// stringList decodes a JSON array of strings; null or [] gives nil.
func (p *parser) stringList(raw json.RawMessage, path string) []string {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		p.probs.add(path, "%s", decodeMessage(raw, err, "an array of strings"))
		return nil
	}
	var out []string
	for i, item := range items {
		var s string
		if err := json.Unmarshal(item, &s); err != nil || isNull(item) {
			p.probs.add(indexPath(path, i), "%s", decodeMessage(item, err, "a string"))
		}
		out = append(out, s)
	}
	return out
}

// decodeMessage explains why raw did not decode as the wanted kind of value.
func decodeMessage(raw []byte, err error, wanted string) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off := max(syn.Offset-1, 0) // Offset counts the bytes read, the bad one included
		line, col := lineCol(raw, off)
		return fmt.Sprintf("invalid JSON at byte offset %d (line %d, column %d): %v", off, line, col, err)
	case err == nil, errors.As(err, &typ):
		return fmt.Sprintf("expected %s, got %s", wanted, describe(raw))
	}
	return err.Error()
}

// lineCol converts a 0-based byte offset to a 1-based line and column.
func lineCol(data []byte, offset int64) (line, col int) {
	before := data[:min(max(offset, 0), int64(len(data)))]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// describe names the JSON kind of raw, with the value for short scalars.
func describe(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean " + string(raw)
	case '"':
		if len(raw) > 40 {
			return "a string"
		}
		return "string " + string(raw)
	}
	if len(raw) > 40 {
		return "a number"
	}
	return "number " + string(raw)
}

// want names the JSON kind a destination pointer expects.
func want(dst any) string {
	switch reflect.TypeOf(dst).Elem().Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	}
	return "a different JSON value"
}

// isNull reports whether raw is absent or the JSON null.
func isNull(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// compactRaw returns raw without insignificant space; null becomes nil.
func compactRaw(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return bytes.Clone(raw)
	}
	return b.Bytes()
}
