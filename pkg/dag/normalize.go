package dag

import (
	"bytes"
	"encoding/json"
	"strings"
)

// normalizeTop rewrites seed top-level keys into the native ones (see the package doc).
func normalizeTop(top map[string]json.RawMessage) {
	if renameKey(top, "id", "name") {
		top["name"] = seedName(top["name"])
	}
	if !renameKey(top, "tasks", "nodes") {
		renameKey(top, "steps", "nodes")
	}
}

// normalizeNode rewrites one seed node into the native form, reporting seed values that cannot
// be converted.
func normalizeNode(obj map[string]json.RawMessage, path string, ps *problems) {
	renameKey(obj, "node_id", "id")
	renameKey(obj, "dependencies", "depends_on")
	_, hasHandler := obj["handler"]
	_, hasCommand := obj["command"]
	switch {
	case hasHandler:
		seed004Node(obj, path, ps)
	case hasCommand:
		shellNode(obj, path, ps)
	case stringField(obj, "type") == "task":
		simulateNode(obj, path, ps)
	}
	for _, key := range []string{"max_retries", "retries"} {
		if _, ok := obj[key]; ok && !has(obj, "retry") {
			if n, ok := retryCount(obj[key], keyPath(path, key), ps); ok {
				setRetry(obj, n)
			}
			delete(obj, key)
		}
	}
}

// renameKey moves obj[from] to obj[to] when from is present and to is absent.
func renameKey(obj map[string]json.RawMessage, from, to string) bool {
	v, ok := obj[from]
	if !ok || has(obj, to) {
		return false
	}
	obj[to] = v
	delete(obj, from)
	return true
}

func has(obj map[string]json.RawMessage, key string) bool {
	_, ok := obj[key]
	return ok
}

// stringField returns obj[key] when it is a JSON string, else "".
func stringField(obj map[string]json.RawMessage, key string) string {
	var s string
	if raw, ok := obj[key]; !ok || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// seedName turns a seed id into a valid workflow name when it is not one already: lower-case,
// characters outside [a-z0-9_.-] become '-', leading '-', '_', '.' are dropped, at most 64
// bytes. Anything that still is not a valid name is returned unchanged for validation to report.
func seedName(raw json.RawMessage) json.RawMessage {
	var id string
	if json.Unmarshal(raw, &id) != nil || validName(id) {
		return raw
	}
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		case r < 128 && (isLowerAlnum(byte(r)) || r == '_' || r == '.' || r == '-'):
			return r
		}
		return '-'
	}, id)
	name = strings.TrimLeft(name, "-_.")
	name = name[:min(len(name), 64)]
	if !validName(name) {
		return raw
	}
	return mustJSON(name)
}

// configObject decodes obj["config"] as an object (absent or null give an empty one). It reports
// a problem and returns false when config is another kind of JSON value.
func configObject(obj map[string]json.RawMessage, path string, ps *problems) (map[string]any, bool) {
	raw := obj["config"]
	cfg := map[string]any{}
	if isNull(raw) {
		return cfg, true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&cfg); err != nil || cfg == nil {
		ps.add(path+".config", "expected a JSON object, got %s", describe(raw))
		return nil, false
	}
	return cfg, true
}

func setConfig(obj map[string]json.RawMessage, cfg map[string]any) {
	obj["config"] = mustJSON(cfg)
}

// setRetry sets obj["retry"] to {"max_attempts": retries+1}.
func setRetry(obj map[string]json.RawMessage, retries int64) {
	obj["retry"] = mustJSON(map[string]int64{"max_attempts": retries + 1})
}

// retryCount reads a seed retry count: an integer from 0 to MaxRetryAttempts-1.
func retryCount(v any, path string, ps *problems) (int64, bool) {
	var n json.Number
	switch x := v.(type) {
	case json.RawMessage:
		if json.Unmarshal(x, &n) != nil {
			n = ""
		}
	case json.Number:
		n = x
	}
	i, err := n.Int64()
	if err != nil || i < 0 || i >= MaxRetryAttempts {
		ps.add(path, "expected an integer number of retries from 0 to %d", MaxRetryAttempts-1)
		return 0, false
	}
	return i, true
}

// mustJSON marshals values that cannot fail to marshal (strings, numbers, decoded JSON),
// without escaping '<' and '>' so that templates stay readable in the stored config.
func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("dag: marshal normalised value: " + err.Error())
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
