package dag

import (
	"encoding/json"
	"regexp"
	"strconv"
)

// seed004Handlers maps seed 004 handler names to Braid handlers.
var seed004Handlers = map[string]string{
	"external_service": "http",
	"llm_service":      "llm",
	"data_processor":   "transform",
}

// seedTemplate matches a seed 004 template such as "{{ fetch_data.result }}".
var seedTemplate = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+|\[[0-9]+\])*)\s*\}\}`)

// seed004Node renames a seed 004 handler, marks external services as mocks and converts the
// seed templates in the config.
func seed004Node(obj map[string]json.RawMessage, path string, ps *problems) {
	old := stringField(obj, "handler")
	handler, ok := seed004Handlers[old]
	if !ok {
		return
	}
	obj["handler"] = mustJSON(handler)
	cfg, ok := configObject(obj, path, ps)
	if !ok {
		return
	}
	if old == "external_service" {
		cfg["mock"] = true
	}
	setConfig(obj, convertSeedTemplates(cfg).(map[string]any))
}

// convertSeedTemplates rewrites "{{ a.b }}" as "<< a.b >>" in every string in v. Text that is
// already a "<<" template is left alone, so a half-migrated definition keeps working.
func convertSeedTemplates(v any) any {
	switch x := v.(type) {
	case string:
		return seedTemplate.ReplaceAllString(x, "<< $1 >>")
	case []any:
		for i := range x {
			x[i] = convertSeedTemplates(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = convertSeedTemplates(x[k])
		}
	}
	return v
}

// shellNode turns a seed 000 task ({"command": ...}) into a shell node. A command already in
// config is kept and the node-level one is left for the unknown-field check.
func shellNode(obj map[string]json.RawMessage, path string, ps *problems) {
	obj["handler"] = mustJSON("shell")
	cfg, ok := configObject(obj, path, ps)
	if !ok {
		return
	}
	if _, taken := cfg["command"]; taken {
		return
	}
	var command any
	_ = json.Unmarshal(obj["command"], &command) // valid JSON: it came from the decoder
	cfg["command"] = command
	setConfig(obj, cfg)
	delete(obj, "command")
}

// simulateNode turns a seed 002 step ({"type": "task", "config": {"duration_seconds": ...}})
// into a simulate node.
func simulateNode(obj map[string]json.RawMessage, path string, ps *problems) {
	obj["handler"] = mustJSON("simulate")
	delete(obj, "type")
	cfg, ok := configObject(obj, path, ps)
	if !ok {
		return
	}
	if secs, ok := cfg["duration_seconds"]; ok {
		delete(cfg, "duration_seconds")
		if d, ok := seedSeconds(secs); ok {
			cfg["duration"] = d
		} else {
			ps.add(path+".config.duration_seconds", "expected a non-negative number of seconds, got %v", secs)
		}
	}
	if n, ok := cfg["max_retries"]; ok && !has(obj, "retry") {
		delete(cfg, "max_retries")
		if retries, ok := retryCount(n, path+".config.max_retries", ps); ok {
			setRetry(obj, retries)
		}
	}
	setConfig(obj, cfg)
}

// seedSeconds formats a seed number of seconds as a duration string: 2 → "2s", 0.5 → "0.5s".
func seedSeconds(v any) (string, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return "", false
	}
	f, err := n.Float64()
	if err != nil || f < 0 {
		return "", false
	}
	s := strconv.FormatFloat(f, 'f', -1, 64) + "s"
	if _, err := ParseDuration(s); err != nil {
		return "", false
	}
	return s, true
}
