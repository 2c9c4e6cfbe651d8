package dag

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"unicode/utf8"
)

// object decodes raw as a JSON object, reporting a problem at path when it is anything else.
func (p *parser) object(raw []byte, path string) (map[string]json.RawMessage, bool) {
	if p.valid && fastPaths {
		if obj, ok := splitObject(raw); ok {
			return obj, true
		}
	}
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

// fields decodes each key of obj into the destination dst names for it and reports every key
// dst has none for (nil) as an unknown field, in sorted key order. A field's path is built only
// to report a problem.
func (p *parser) fields(obj map[string]json.RawMessage, path string, dst func(key string) any) {
	var buf [16]string
	keys := buf[:0]
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		target := dst(key)
		if target == nil {
			p.probs.add(keyPath(path, key), "unknown field %q", key)
			continue
		}
		p.value(obj[key], path, key, target)
	}
}

// value decodes raw, the value of key in the object at path, into dst. Raw JSON destinations are
// compacted (null becomes absent) and string lists are decoded element by element so a bad
// element has its own path.
func (p *parser) value(raw json.RawMessage, path, key string, dst any) {
	switch dst := dst.(type) {
	case *json.RawMessage:
		*dst = compactRaw(raw)
		return
	case *[]string:
		*dst = p.stringList(raw, path, key)
		return
	case *string:
		if s, ok := plainString(raw); ok && fastPaths {
			*dst = s
			return
		}
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		p.probs.add(keyPath(path, key), "%s", decodeMessage(raw, err, want(dst)))
	}
}

// fastPaths enables the decoders that skip json.Unmarshal for input it would decode as is
// (plainString, plainStringList, splitObject, splitArray); tests turn it off to check that
// both ways give the same definitions and problems.
var fastPaths = true

// plainString returns the string the JSON string raw holds when it needs no decoding: quoted,
// with no escape, no control character and valid UTF-8 inside (what json.Unmarshal would return
// as it is); false for anything else, which the caller decodes with json.Unmarshal.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}

// plainStringList returns the strings of the JSON array raw when it is an array of plain
// strings (plainString) with JSON whitespace between the tokens; false for anything else. An
// empty array gives nil, as stringList does.
func plainStringList(raw []byte) ([]string, bool) {
	var out []string
	ok := elements(raw, '[', ']', func(i int) (int, bool) {
		if raw[i] != '"' {
			return 0, false
		}
		end := bytes.IndexByte(raw[i+1:], '"')
		if end < 0 {
			return 0, false
		}
		str, ok := plainString(raw[i : i+end+2])
		out = append(out, str)
		return i + end + 2, ok
	})
	return out, ok
}

// skipSpace returns the index of the first byte of b at or after i that is not JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringList decodes a JSON array of strings, the value of key in the object at path; null or []
// gives nil.
func (p *parser) stringList(raw json.RawMessage, path, key string) []string {
	if out, ok := plainStringList(raw); ok && fastPaths {
		return out
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		p.probs.add(keyPath(path, key), "%s", decodeMessage(raw, err, "an array of strings"))
		return nil
	}
	var out []string
	for i, item := range items {
		var s string
		if err := json.Unmarshal(item, &s); err != nil || isNull(item) {
			p.probs.add(indexPath(keyPath(path, key), i), "%s", decodeMessage(item, err, "a string"))
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

// splitObject returns the members of the JSON object raw as json.Unmarshal into a
// map[string]json.RawMessage returns them (the last of duplicate keys wins), the values as
// sub-slices of raw, not copies. raw must be part of a valid JSON document (parser.valid):
// only its structure is followed. False when raw is not an object, or a key holds an escape
// or is not valid UTF-8 (which json.Unmarshal rewrites); the caller then decodes it with
// json.Unmarshal.
func splitObject(raw []byte) (map[string]json.RawMessage, bool) {
	obj := map[string]json.RawMessage{}
	ok := elements(raw, '{', '}', func(i int) (int, bool) {
		if raw[i] != '"' {
			return 0, false
		}
		end := skipValue(raw, i)
		key, ok := plainString(raw[i:end])
		if i = skipSpace(raw, end); !ok || i >= len(raw) || raw[i] != ':' {
			return 0, false
		}
		i = skipSpace(raw, i+1)
		end = skipValue(raw, i)
		obj[key] = raw[i:end:end]
		return end, true
	})
	return obj, ok
}

// splitArray returns the elements of the JSON array raw as json.Unmarshal into a
// []json.RawMessage returns them, as sub-slices of raw; raw must be part of a valid JSON
// document (see splitObject). False when raw is not an array.
func splitArray(raw []byte) ([]json.RawMessage, bool) {
	items := []json.RawMessage{}
	ok := elements(raw, '[', ']', func(i int) (int, bool) {
		end := skipValue(raw, i)
		items = append(items, raw[i:end:end])
		return end, true
	})
	return items, ok
}

// elements walks the JSON array or object raw, opened by open and closed by close, calling
// elem with the index of each element (of a member: its key), which answers the index just
// after the element, or false to give up. It reports whether raw was such a container, with
// nothing but JSON whitespace around it, and elem took every element. Elements are at indexes
// below len(raw).
func elements(raw []byte, open, close byte, elem func(i int) (int, bool)) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != open {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == close {
		return skipSpace(raw, i+1) == len(raw)
	}
	for i < len(raw) {
		end, ok := elem(i)
		if !ok {
			return false
		}
		if i = skipSpace(raw, end); i >= len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case close:
			return skipSpace(raw, i+1) == len(raw)
		default:
			return false
		}
	}
	return false
}

// skipValue returns the index just after the JSON value that starts at b[i]; b must be valid
// JSON from there on. A string ends at its first unescaped quote; an object or array at the
// bracket that closes it, strings inside skipped whole; anything else (a number, true, false,
// null) at the next delimiter.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the index just after the JSON string that starts at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}
