package dag

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSeeds(t *testing.T) {
	t.Parallel()
	shell := func(id, cmd string, deps ...string) Node {
		return Node{ID: id, Handler: "shell", Config: json.RawMessage(`{"command":"` + cmd + `"}`), DependsOn: deps}
	}
	simulate := func(id, config string, attempts int, deps ...string) Node {
		return Node{ID: id, Handler: "simulate", Config: json.RawMessage(config),
			DependsOn: deps, Retry: &RetryPolicy{MaxAttempts: attempts}}
	}
	tests := []struct {
		seed string
		want *Definition
	}{
		{"seed000", &Definition{Name: "example_workflow", Nodes: []Node{
			shell("A", "echo A"), shell("B", "echo B", "A"), shell("C", "echo C", "A"), shell("D", "echo D", "B", "C"),
		}}},
		{"seed002", &Definition{Name: "order-processing", Nodes: []Node{
			simulate("validate", `{"action":"validate_order","duration":"2s","fail_probability":0.0}`, 1),
			simulate("charge", `{"action":"charge_payment","duration":"3s","fail_probability":0.3}`, 3, "validate"),
			simulate("ship", `{"action":"ship_order","duration":"2s","fail_probability":0.0}`, 1, "charge"),
		}}},
		{"seed004", &Definition{Name: "fan-out-fan-in", Nodes: []Node{
			{ID: "fetch_data", Handler: "http", Config: json.RawMessage(`{"mock":true,"url":"https://api.example.com/data"}`)},
			{ID: "summarise", Handler: "llm", Config: json.RawMessage(`{"prompt":"Summarise: << fetch_data.result >>"}`),
				DependsOn: []string{"fetch_data"}},
			{ID: "enrich", Handler: "transform", Config: json.RawMessage(`{"input":"<< fetch_data.result >>","operation":"uppercase"}`),
				DependsOn: []string{"fetch_data"}},
			{ID: "report", Handler: "llm", Config: json.RawMessage(`{"prompt":"Combine << summarise.result >> and << enrich.result >>"}`),
				DependsOn: []string{"summarise", "enrich"}},
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.seed, func(t *testing.T) {
			t.Parallel()
			d, err := Parse(readSeed(t, tc.seed))
			require.NoError(t, err)
			require.Equal(t, tc.want, d)
			again, err := Parse(marshal(t, d))
			require.NoError(t, err)
			require.Equal(t, d, again, "the normalised form parses to itself")
			g, err := Compile(d)
			require.NoError(t, err)
			require.Len(t, g.Order, len(d.Nodes))
		})
	}
}

func TestParseNormalisesSeedVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		want  *Definition
	}{
		{"uppercase seed id becomes a valid name",
			`{"id": "My Workflow!", "tasks": [{"id": "a", "command": "true"}]}`,
			&Definition{Name: "my-workflow-", Nodes: []Node{{ID: "a", Handler: "shell", Config: json.RawMessage(`{"command":"true"}`)}}}},
		{"seed 000 retries and timeout",
			`{"id": "x", "tasks": [{"id": "a", "command": "sleep 1", "max_retries": 2, "timeout": 30}]}`,
			&Definition{Name: "x", Nodes: []Node{{ID: "a", Handler: "shell", Config: json.RawMessage(`{"command":"sleep 1"}`),
				Retry: &RetryPolicy{MaxAttempts: 3}, Timeout: Duration(30e9)}}}},
		{"node-level retries alias",
			`{"name": "x", "nodes": [{"id": "a", "handler": "noop", "retries": 0}]}`,
			&Definition{Name: "x", Nodes: []Node{{ID: "a", Handler: "noop", Retry: &RetryPolicy{MaxAttempts: 1}}}}},
		{"seed 004 converts paths and keeps native templates",
			`{"name": "x", "nodes": [{"node_id": "a", "handler": "data_processor"},
			 {"node_id": "b", "handler": "external_service", "dependencies": ["a"],
			  "config": {"body": ["<< a.x >>", "{{ a.rows[0].name }}", "{{a}}"], "n": 1.50}}]}`,
			&Definition{Name: "x", Nodes: []Node{
				{ID: "a", Handler: "transform", Config: json.RawMessage(`{}`)},
				{ID: "b", Handler: "http", DependsOn: []string{"a"},
					Config: json.RawMessage(`{"body":["<< a.x >>","<< a.rows[0].name >>","<< a >>"],"mock":true,"n":1.50}`)},
			}}},
		{"seed 002 fractional duration without retries",
			`{"name": "x", "steps": [{"id": "a", "type": "task", "config": {"duration_seconds": 0.25}}]}`,
			&Definition{Name: "x", Nodes: []Node{{ID: "a", Handler: "simulate", Config: json.RawMessage(`{"duration":"0.25s"}`)}}}},
		{"seed 002 keeps an explicit retry",
			`{"name": "x", "steps": [{"id": "a", "type": "task", "retry": {"max_attempts": 5}, "config": {"max_retries": 1}}]}`,
			&Definition{Name: "x", Nodes: []Node{{ID: "a", Handler: "simulate", Config: json.RawMessage(`{"max_retries":1}`),
				Retry: &RetryPolicy{MaxAttempts: 5}}}}},
		{"native config is compacted, not rewritten",
			`{"name": "x", "nodes": [{"id": "a", "handler": "noop", "config": { "z": 1,  "a": "<< input.q >>" }, "parallel": 2}]}`,
			&Definition{Name: "x", Nodes: []Node{{ID: "a", Handler: "noop", Config: json.RawMessage(`{"z":1,"a":"<< input.q >>"}`),
				Parallel: json.RawMessage(`2`)}}}},
		{"nulls are absent",
			`{"name": "x", "inputs": null, "nodes": [{"id": "a", "handler": "noop", "config": null, "retry": null, "depends_on": null}]}`,
			&Definition{Name: "x", Nodes: []Node{{ID: "a", Handler: "noop"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := Parse([]byte(tc.input))
			require.NoError(t, err)
			require.Equal(t, tc.want, d)
		})
	}
}

func TestParseReportsDecodeProblems(t *testing.T) {
	t.Parallel()
	tests := []problemCase{
		{"syntax error with offset", []byte("{\"name\": \"wf\",\n \"nodes\": [}"),
			[]Problem{{"$", "invalid JSON at byte offset 26 (line 2, column 12): invalid character '}' looking for beginning of value"}}},
		{"trailing data", []byte(`{"name": "wf"} x`),
			[]Problem{{"$", "invalid JSON at byte offset 15 (line 1, column 16): invalid character 'x' after top-level value"}}},
		{"not an object", []byte(`[1, 2]`), []Problem{{"$", "expected a JSON object, got an array"}}},
		{"null document", []byte(`null`), []Problem{{"$", "expected a JSON object, got null"}}},
		{"empty document", []byte(``), []Problem{{"$", "invalid JSON at byte offset 0 (line 1, column 1): unexpected end of JSON input"}}},
		{"too large", []byte(`{"name": "` + strings.Repeat("a", MaxDefinitionBytes) + `"}`),
			[]Problem{{"$", "definition is 1048588 bytes; the limit is 1048576"}}},
		{"type errors with paths", []byte(`{"name": 7, "concurrency": 1.5, "nodes": [
			{"id": "a", "handler": ["x"], "depends_on": ["b", 3], "retry": {"max_attempts": "3"}, "timeout": "soon"},
			{"id": "b", "handler": "noop", "when": true}]}`),
			[]Problem{
				{"$.concurrency", "expected an integer, got number 1.5"},
				{"$.name", "expected a string, got number 7"},
				{"$.nodes[0].depends_on[1]", "expected a string, got number 3"},
				{"$.nodes[0].handler", `expected a string, got an array`},
				{"$.nodes[0].timeout", `invalid duration "soon" (want a form such as "1h30m", "500ms" or "2s")`},
				{"$.nodes[0].retry.max_attempts", `expected an integer, got string "3"`},
				{"$.nodes[1].when", "expected a string, got boolean true"},
			}},
		{"nodes not an array", []byte(`{"name": "wf", "nodes": {"a": {}}}`),
			[]Problem{{"$.nodes", "expected an array of nodes, got an object"}}},
		{"node not an object, others still checked", []byte(`{"name": "wf", "nodes": ["a", {"id": "b"}]}`),
			[]Problem{{"$.nodes[0]", `expected a JSON object, got string "a"`}, {"$.nodes[1].handler", "handler is required"}}},
		{"unknown fields", []byte(`{"name": "wf", "owner": "me", "inputs": {"d": {"typ": "string"}},
			"nodes": [{"id": "a", "handler": "noop", "retires": 3, "retry": {"max_attempts": 2, "delay": "1s"}}]}`),
			[]Problem{
				{"$.owner", `unknown field "owner"`},
				{"$.inputs.d.typ", `unknown field "typ"`},
				{"$.nodes[0].retires", `unknown field "retires"`},
				{"$.nodes[0].retry.delay", `unknown field "delay"`},
			}},
		{"alias and target both present", []byte(`{"name": "wf", "id": "other", "nodes": [{"id": "a", "handler": "noop"}], "tasks": []}`),
			[]Problem{{"$.id", `unknown field "id"`}, {"$.tasks", `unknown field "tasks"`}}},
		{"node alias conflicts", []byte(`{"name": "wf", "nodes": [{"id": "a", "node_id": "b", "handler": "noop", "retry": {"max_attempts": 1}, "max_retries": 2}]}`),
			[]Problem{{"$.nodes[0].max_retries", `unknown field "max_retries"`}, {"$.nodes[0].node_id", `unknown field "node_id"`}}},
		{"bad seed values", []byte(`{"name": "wf", "steps": [
			{"id": "a", "type": "task", "config": {"duration_seconds": "2", "max_retries": -1}},
			{"id": "b", "command": "x", "retries": 1.5},
			{"id": "c", "handler": "external_service", "config": "oops"}]}`),
			[]Problem{
				{"$.nodes[0].config.duration_seconds", "expected a non-negative number of seconds, got 2"},
				{"$.nodes[0].config.max_retries", "expected an integer number of retries from 0 to 99"},
				{"$.nodes[1].retries", "expected an integer number of retries from 0 to 99"},
				{"$.nodes[2].config", `expected a JSON object, got string "oops"`},
			}},
		{"unknown seed type is not converted", []byte(`{"name": "wf", "steps": [{"id": "a", "type": "approval"}]}`),
			[]Problem{{"$.nodes[0].type", `unknown field "type"`}, {"$.nodes[0].handler", "handler is required"}}},
		{"too many nodes", []byte(`{"name": "wf", "nodes": [` + strings.Repeat(`{},`, MaxNodes) + `{}]}`),
			[]Problem{{"$.nodes", "workflow has 10001 nodes; the limit is 10000"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := Parse(tc.input)
			require.Nil(t, d)
			require.Equal(t, tc.want, problemsOf(t, err))
		})
	}
}

func TestValidationErrorMessage(t *testing.T) {
	t.Parallel()
	one := &ValidationError{Problems: []Problem{{"$.name", "name is required"}}}
	require.Equal(t, "invalid workflow definition: $.name: name is required", one.Error())
	many := &ValidationError{}
	for i := range 7 {
		many.Problems = append(many.Problems, Problem{nodePath(i) + ".id", "id is required"})
	}
	require.Equal(t, "invalid workflow definition: 7 problems: $.nodes[0].id: id is required; $.nodes[1].id: id is required; "+
		"$.nodes[2].id: id is required; $.nodes[3].id: id is required; $.nodes[4].id: id is required; and 2 more", many.Error())
}
