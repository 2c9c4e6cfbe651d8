package template

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// text renders v for interpolation into a longer string: strings as-is, numbers as JSON text,
// booleans as true/false, null as "null", objects and arrays as compact JSON.
func text(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	case nil:
		return "null", nil
	}
	return compactJSON(v)
}

// compactJSON renders v as compact JSON without HTML escaping.
func compactJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// isNumber reports whether v is one of the number types a Scope may hold.
func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64:
		return true
	}
	return false
}
