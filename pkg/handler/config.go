package handler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/worker"
)

// object is a node config split into its top-level keys. Keys a handler does
// not know are kept and ignored; known keys are decoded one by one so that a
// type error names its field.
type object map[string]json.RawMessage

// parseObject splits raw into keys. Absent or null config is an empty object;
// anything else that is not a JSON object is an error.
func parseObject(raw json.RawMessage) (object, error) {
	if isNull(raw) {
		return object{}, nil
	}
	var o object
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("config must be a JSON object, got %s", jsonKind(raw))
	}
	return o, nil
}

// get decodes key name into dst. An absent or null key leaves dst unchanged.
func (o object) get(name string, dst any) error {
	raw, ok := o[name]
	if !ok || isNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fieldError(name, err)
	}
	return nil
}

// has reports whether key name is present and not null.
func (o object) has(name string) bool {
	raw, ok := o[name]
	return ok && !isNull(raw)
}

// field pairs a config key with where to decode it.
type field struct {
	name string
	dst  any
}

// getAll decodes fields in order, stopping at the first error.
func (o object) getAll(fields ...field) error {
	for _, f := range fields {
		if err := o.get(f.name, f.dst); err != nil {
			return err
		}
	}
	return nil
}

// configError marks a bad config as a permanent failure of handler.
func configError(handler string, err error) error {
	return worker.Permanent(fmt.Errorf("%s: invalid config: %w", handler, err))
}

// fieldError turns a decoding error into `config field "x": want T, got K`.
func fieldError(name string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path := name
		if te.Field != "" {
			path += "." + te.Field
		}
		return fmt.Errorf("config field %q: want %s, got %s", path, typeName(te.Type), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("config field %q: invalid JSON: %v", name, err)
	}
	return fmt.Errorf("config field %q: %v", name, err)
}

// typeName names a Go type the way a config author thinks of it.
func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Pointer:
		return typeName(t.Elem())
	default:
		return t.String()
	}
}

// isNull reports whether raw is empty or the JSON literal null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// jsonKind names the kind of JSON value raw starts with.
func jsonKind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// decodeAny decodes raw into a generic JSON value, keeping numbers exact.
// Absent raw decodes to nil.
func decodeAny(raw json.RawMessage) (any, error) {
	if isNull(raw) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

// scalarMap is a JSON object whose values are strings, numbers or booleans,
// kept as strings (numbers keep their literal spelling). Null values are dropped.
type scalarMap map[string]string

// UnmarshalJSON implements json.Unmarshaler.
func (m *scalarMap) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("want object, got %s", jsonKind(b))
	}
	out := make(scalarMap, len(raw))
	for k, v := range raw {
		s, ok, err := scalarString(v)
		if err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		if ok {
			out[k] = s
		}
	}
	*m = out
	return nil
}

// scalarString renders a JSON scalar as a string; ok is false for null.
func scalarString(v json.RawMessage) (s string, ok bool, err error) {
	switch jsonKind(v) {
	case "null":
		return "", false, nil
	case "string":
		err = json.Unmarshal(v, &s)
		return s, err == nil, err
	case "number", "boolean":
		return string(bytes.TrimSpace(v)), true, nil
	default:
		return "", false, fmt.Errorf("want string, number or boolean, got %s", jsonKind(v))
	}
}

// maxDuration bounds configured durations (a year) so seconds convert safely.
const maxDuration = 365 * 24 * time.Hour

// duration is a non-negative duration given as a Go duration string ("1m30s")
// or as a number of seconds (1.5).
type duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *duration) UnmarshalJSON(b []byte) error {
	v, err := parseDuration(b)
	if err != nil {
		return err
	}
	if v < 0 || v > maxDuration {
		return fmt.Errorf("duration %s out of range [0, %s]", v, maxDuration)
	}
	*d = duration(v)
	return nil
}

func parseDuration(b []byte) (time.Duration, error) {
	const want = `want duration string like "2s" or number of seconds`
	switch jsonKind(b) {
	case "string":
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return 0, err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%s, got %q", want, s)
		}
		return v, nil
	case "number":
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 64)
		if err != nil || math.IsNaN(f) || math.Abs(f) > maxDuration.Seconds() {
			return 0, fmt.Errorf("%s, got %s", want, bytes.TrimSpace(b))
		}
		return time.Duration(f * float64(time.Second)), nil
	default:
		return 0, fmt.Errorf("%s, got %s", want, jsonKind(b))
	}
}
