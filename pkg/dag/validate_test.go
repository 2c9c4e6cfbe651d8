package dag

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type problemCase struct {
	name  string
	input []byte
	want  []Problem
}

// validationCases hold definitions that decode cleanly but fail validation, one problem kind each.
var validationCases = []problemCase{
	{"empty workflow", []byte(`{"name": "wf", "nodes": []}`),
		[]Problem{{"$.nodes", "workflow has no nodes"}}},
	{"missing nodes", []byte(`{"name": "wf"}`),
		[]Problem{{"$.nodes", "workflow has no nodes"}}},
	{"missing name", []byte(`{"nodes": [{"id": "a", "handler": "noop"}]}`),
		[]Problem{{"$.name", "name is required"}}},
	{"bad name", []byte(`{"name": "Bad Name", "nodes": [{"id": "a", "handler": "noop"}]}`),
		[]Problem{{"$.name", `name "Bad Name" must match [a-z0-9][a-z0-9_.-]{0,63}`}}},
	{"negative workflow fields", []byte(`{"name": "wf", "concurrency": -1, "timeout": "-1m", "nodes": [{"id": "a", "handler": "noop"}]}`),
		[]Problem{{"$.concurrency", "concurrency must not be negative, got -1"}, {"$.timeout", "timeout must not be negative, got -1m"}}},
	{"missing id", wf(`{"handler": "noop"}`),
		[]Problem{{"$.nodes[0].id", "id is required"}}},
	{"bad id", wf(`{"id": "a b", "handler": "noop"}`),
		[]Problem{{"$.nodes[0].id", `id "a b" must match [A-Za-z0-9_-]{1,64}`}}},
	{"reserved id", wf(`{"id": "input", "handler": "noop"}`),
		[]Problem{{"$.nodes[0].id", `id "input" is reserved for templates (input, run, item, index, count, secret)`}}},
	{"secret as id", wf(`{"id": "secret", "handler": "noop"}`),
		[]Problem{{"$.nodes[0].id", `id "secret" is reserved for templates (input, run, item, index, count, secret)`}}},
	{"secret in a shell command", wf(`{"id": "a", "handler": "shell", "config": {"command": "curl -u << secret.TOKEN >> x"}}`),
		[]Problem{{"$.nodes[0].config.command", `secrets cannot be used in a shell command, where the process list would show them: set one in the node's env ("env": {"TOKEN": "<< secret.TOKEN >>"}) and use "$TOKEN"`}}},
	{"secret with a filter", wf(`{"id": "a", "handler": "http", "config": {"url": "https://x/<< secret.TOKEN | upper >>"}}`),
		[]Problem{{"$.nodes[0].config.url", `template "<< secret.TOKEN | upper >>": write it as << secret.NAME >>, with no index or filter`}}},
	{"secret with a path", wf(`{"id": "a", "handler": "http", "config": {"url": "<< secret.A.b >>"}}`),
		[]Problem{{"$.nodes[0].config.url", `template "<< secret.A.b >>": write it as << secret.NAME >>, with no index or filter`}}},
	{"secret in foreach", wf(`{"id": "a", "handler": "noop", "foreach": "<< secret.LIST >>"}`),
		[]Problem{{"$.nodes[0].foreach", "secrets cannot be used in foreach, only in a node's config"}}},
	{"secret in a wait node", wf(`{"id": "a", "handler": "wait", "config": {"duration": "<< secret.D >>"}}`),
		[]Problem{{"$.nodes[0].config.duration", "secrets cannot be used in the config of a wait node: no worker runs it"}}},
	{"template in a jq program", wf(`{"id": "a", "handler": "transform", "config": {"jq": ".[] | select(.n == \"<< input.n >>\")", "input": []}}`),
		[]Problem{{"$.nodes[0].config.jq", `templates cannot be used in a jq program, where a value would become code: pass values in "input" (e.g. "input": {"name": "<< input.name >>"}) and read them as .name`}}},
	{"duplicate id", wf(`{"id": "a", "handler": "noop"}, {"id": "b", "handler": "noop"}, {"id": "a", "handler": "noop"}`),
		[]Problem{{"$.nodes[2].id", `duplicate id "a" (first used at $.nodes[0])`}}},
	{"missing handler", wf(`{"id": "a"}`),
		[]Problem{{"$.nodes[0].handler", "handler is required"}}},
	{"unknown dependency", wf(`{"id": "a", "handler": "noop", "depends_on": ["zz"]}`),
		[]Problem{{"$.nodes[0].depends_on[0]", `unknown node "zz"`}}},
	{"self dependency", wf(`{"id": "a", "handler": "noop", "depends_on": ["a"]}`),
		[]Problem{{"$.nodes[0].depends_on[0]", `node "a" depends on itself`}}},
	{"duplicate dependency", wf(`{"id": "a", "handler": "noop"}, {"id": "b", "handler": "noop", "depends_on": ["a", "a"]}`),
		[]Problem{{"$.nodes[1].depends_on[1]", `duplicate dependency "a"`}}},
	{"two-node cycle", wf(`{"id": "a", "handler": "noop", "depends_on": ["b"]}, {"id": "b", "handler": "noop", "depends_on": ["a"]}`),
		[]Problem{{"$.nodes[0].depends_on[0]", "cycle: a -> b -> a"}}},
	{"three-node cycle named in flow order", wf(`{"id": "x", "handler": "noop"},
		{"id": "c", "handler": "noop", "depends_on": ["b"]},
		{"id": "a", "handler": "noop", "depends_on": ["x", "c"]},
		{"id": "b", "handler": "noop", "depends_on": ["a"]}`),
		[]Problem{{"$.nodes[1].depends_on[0]", "cycle: c -> a -> b -> c"}}},
	{"two cycles through one node, each once", wf(`{"id": "a", "handler": "noop", "depends_on": ["b", "c"]},
		{"id": "b", "handler": "noop", "depends_on": ["a"]},
		{"id": "c", "handler": "noop", "depends_on": ["a"]}`),
		[]Problem{{"$.nodes[0].depends_on[0]", "cycle: a -> b -> a"}, {"$.nodes[0].depends_on[1]", "cycle: a -> c -> a"}}},
	{"bad trigger rule", wf(`{"id": "a", "handler": "noop", "trigger_rule": "sometimes"}`),
		[]Problem{{"$.nodes[0].trigger_rule", `unknown trigger rule "sometimes" (want one of all_success, all_done, one_success, one_failed, none_failed, all_failed)`}}},
	{"unparsable when", wf(`{"id": "a", "handler": "noop", "when": "a =="}`),
		[]Problem{{"$.nodes[0].when", "invalid when expression: unexpected token EOF (1:4)"}}},
	{"when too long", wf(`{"id": "a", "handler": "noop", "when": "` + strings.Repeat("!", MaxWhenBytes) + `true"}`),
		[]Problem{{"$.nodes[0].when", "when expression is 4100 bytes; the limit is 4096"}}},
	{"non-boolean when", wf(`{"id": "a", "handler": "noop", "when": "1 + 2"}`),
		[]Problem{{"$.nodes[0].when", "invalid when expression: expected bool, but got int"}}},
	{"negative node durations and concurrency", wf(`{"id": "a", "handler": "noop", "timeout": -2, "heartbeat_timeout": "-1s", "concurrency": -3}`),
		[]Problem{
			{"$.nodes[0].timeout", "timeout must not be negative, got -2s"},
			{"$.nodes[0].heartbeat_timeout", "heartbeat_timeout must not be negative, got -1s"},
			{"$.nodes[0].concurrency", "concurrency must not be negative, got -3"},
		}},
	{"retry without attempts", wf(`{"id": "a", "handler": "noop", "retry": {"backoff": "fixed"}}`),
		[]Problem{{"$.nodes[0].retry.max_attempts", "max_attempts must be from 1 to 100, got 0"}}},
	{"retry too many attempts", wf(`{"id": "a", "handler": "noop", "retry": {"max_attempts": 101}}`),
		[]Problem{{"$.nodes[0].retry.max_attempts", "max_attempts must be from 1 to 100, got 101"}}},
	{"retry bad fields", wf(`{"id": "a", "handler": "noop", "retry": {"max_attempts": 2, "backoff": "linear",
		"initial_interval": "1m", "max_interval": "1s", "multiplier": 0.5, "jitter": 1.5}}`),
		[]Problem{
			{"$.nodes[0].retry.backoff", `unknown backoff "linear" (want fixed or exponential)`},
			{"$.nodes[0].retry.max_interval", "max_interval 1s is less than initial_interval 1m"},
			{"$.nodes[0].retry.multiplier", "multiplier must be at least 1, got 0.5"},
			{"$.nodes[0].retry.jitter", "jitter must be from 0 to 1, got 1.5"},
		}},
	{"retry negative interval", wf(`{"id": "a", "handler": "noop", "retry": {"max_attempts": 2, "initial_interval": "-1s"}}`),
		[]Problem{{"$.nodes[0].retry.initial_interval", "initial_interval must not be negative, got -1s"}}},
	{"foreach and parallel together", wf(`{"id": "a", "handler": "noop", "config": {"xs": [1]}},
		{"id": "b", "handler": "noop", "depends_on": ["a"], "foreach": "<< a.xs >>", "parallel": 2}`),
		[]Problem{{"$.nodes[1].parallel", "foreach and parallel cannot be used together"}}},
	{"parallel zero", wf(`{"id": "a", "handler": "noop", "parallel": 0}`),
		[]Problem{{"$.nodes[0].parallel", "parallel must be a positive integer or a template, got number 0"}}},
	{"parallel fraction", wf(`{"id": "a", "handler": "noop", "parallel": 2.5}`),
		[]Problem{{"$.nodes[0].parallel", "parallel must be a positive integer or a template, got number 2.5"}}},
	{"parallel plain string", wf(`{"id": "a", "handler": "noop", "parallel": "4"}`),
		[]Problem{{"$.nodes[0].parallel", `parallel must be a positive integer or a template, got string "4"`}}},
	{"parallel over the limit", wf(`{"id": "a", "handler": "noop", "parallel": 1000001}`),
		[]Problem{{"$.nodes[0].parallel", "parallel is 1000001 instances; the limit is 1000000"}}},
	{"parallel huge", wf(`{"id": "a", "handler": "noop", "parallel": 1e30}`),
		[]Problem{{"$.nodes[0].parallel", "parallel must be a positive integer or a template, got number 1e30"}}},
	{"parallel object", wf(`{"id": "a", "handler": "noop", "parallel": {"n": 2}}`),
		[]Problem{{"$.nodes[0].parallel", "parallel must be a positive integer or a template, got an object"}}},
	{"foreach without template", wf(`{"id": "a", "handler": "noop", "foreach": "discover.files"}`),
		[]Problem{{"$.nodes[0].foreach", `foreach must be a template such as "<< node.items >>", got "discover.files"`}}},
	{"template syntax error", wf(`{"id": "a", "handler": "noop", "config": {"msg": "hi << a"}}`),
		[]Problem{{"$.nodes[0].config.msg", `template syntax error at offset 3: unterminated "<<"`}}},
	{"template unknown node", wf(`{"id": "a", "handler": "noop", "config": {"list": ["x", "<< ghost.out >>"]}}`),
		[]Problem{{"$.nodes[0].config.list[1]", `template references unknown node "ghost"`}}},
	{"JSON-escaped template", wf(`{"id": "a", "handler": "noop", "config": "\u003c\u003c ghost >>"}`),
		[]Problem{{"$.nodes[0].config", `template references unknown node "ghost"`}}},
	{"template references itself", wf(`{"id": "a", "handler": "noop", "config": {"x": "<< a.out >>"}}`),
		[]Problem{{"$.nodes[0].config.x", `template references node "a" itself`}}},
	{"template references a sibling", wf(`{"id": "a", "handler": "noop"},
		{"id": "b", "handler": "noop", "depends_on": ["a"]},
		{"id": "c", "handler": "noop", "depends_on": ["a"], "config": {"odd key": "<< b.out >>"}}`),
		[]Problem{{`$.nodes[2].config["odd key"]`, `template references node "b", which is not an ancestor of "c" (add it to depends_on)`}}},
	{"template references a descendant", wf(`{"id": "a", "handler": "noop", "config": "<< b >>"},
		{"id": "b", "handler": "noop", "depends_on": ["a"]}`),
		[]Problem{{"$.nodes[0].config", `template references node "b", which is not an ancestor of "a" (add it to depends_on)`}}},
	{"item outside foreach", wf(`{"id": "a", "handler": "noop", "parallel": 3, "config": {"x": "<< item >> << index >>"}}`),
		[]Problem{{"$.nodes[0].config.x", `"item" is only available in foreach nodes`}}},
	{"index outside fan-out", wf(`{"id": "a", "handler": "noop", "config": {"x": "<< index >> of << count >>"}}`),
		[]Problem{
			{"$.nodes[0].config.x", `"index" is only available in foreach or parallel nodes`},
			{"$.nodes[0].config.x", `"count" is only available in foreach or parallel nodes`},
		}},
	{"item inside foreach", wf(`{"id": "a", "handler": "noop", "foreach": "<< item >>"}`),
		[]Problem{{"$.nodes[0].foreach", `"item" cannot be used in foreach: the fan-out defines it`}}},
	{"parallel template checks", wf(`{"id": "a", "handler": "noop", "parallel": "<< b.n >>"}, {"id": "b", "handler": "noop"}`),
		[]Problem{{"$.nodes[0].parallel", `template references node "b", which is not an ancestor of "a" (add it to depends_on)`}}},
	{"bad inputs", []byte(`{"name": "wf", "inputs": {"a b": {}, "n": {"type": "integer", "default": 1.5}, "t": {"type": "date"}},
		"nodes": [{"id": "a", "handler": "noop"}]}`),
		[]Problem{
			{`$.inputs["a b"]`, `input name "a b" must match [A-Za-z0-9_-]{1,64}`},
			{"$.inputs.n.default", "default number 1.5 is not of type integer"},
			{"$.inputs.t.type", `unknown input type "date" (want one of any, string, number, integer, boolean, object, array)`},
		}},
	{"problems grouped by node", wf(`{"id": "a", "depends_on": ["b"]}, {"id": "b", "handler": "noop", "trigger_rule": "x", "config": "<< a >>"}`),
		[]Problem{
			{"$.nodes[0].handler", "handler is required"},
			{"$.nodes[1].trigger_rule", `unknown trigger rule "x" (want one of all_success, all_done, one_success, one_failed, none_failed, all_failed)`},
			{"$.nodes[1].config", `template references node "a", which is not an ancestor of "b" (add it to depends_on)`},
		}},
}

func TestParseReportsValidationProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range validationCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := Parse(tc.input)
			require.Nil(t, d)
			require.Equal(t, tc.want, problemsOf(t, err))
		})
	}
}

func TestValidateReportsProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range validationCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := decodeOnly(t, tc.input)
			require.Equal(t, tc.want, problemsOf(t, d.Validate()))
			_, err := Compile(d)
			require.Equal(t, tc.want, problemsOf(t, err))
		})
	}
}

func TestValidateAcceptsValidDefinitions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input []byte
	}{
		{"unknown handler", wf(`{"id": "a", "handler": "my-custom-worker"}`)},
		{"grandparent reference", wf(`{"id": "a", "handler": "noop"}, {"id": "b", "handler": "noop", "depends_on": ["a"]},
			{"id": "c", "handler": "noop", "depends_on": ["b"], "config": {"x": "<< a.out >> << b >> << input.day >> << run.id >>"}}`)},
		{"fan-out roots", wf(`{"id": "a", "handler": "noop"},
			{"id": "b", "handler": "noop", "depends_on": ["a"], "foreach": "<< a.items >>", "config": "<< item >> << index >>/<< count >>"},
			{"id": "c", "handler": "noop", "depends_on": ["a"], "parallel": "<< a.n >>", "config": "<< index >>"},
			{"id": "d", "handler": "noop", "parallel": 4, "config": "<< count >>"}`)},
		{"parallel at the limit", wf(`{"id": "a", "handler": "noop", "parallel": 1000000}`)},
		{"escaped template", wf(`{"id": "a", "handler": "shell", "config": {"command": "cat \\<< EOF"}}`)},
		{"all trigger rules", wf(`{"id": "a", "handler": "noop"},
			{"id": "b", "handler": "noop", "depends_on": ["a"], "trigger_rule": "all_success"},
			{"id": "c", "handler": "noop", "depends_on": ["a"], "trigger_rule": "all_done"},
			{"id": "d", "handler": "noop", "depends_on": ["a"], "trigger_rule": "one_success"},
			{"id": "e", "handler": "noop", "depends_on": ["a"], "trigger_rule": "one_failed"},
			{"id": "f", "handler": "noop", "depends_on": ["a"], "trigger_rule": "none_failed"},
			{"id": "g", "handler": "noop", "depends_on": ["a"], "trigger_rule": "all_failed"}`)},
		{"spec example", readSeed(t, "spec")},
		{"secrets in config", wf(`{"id": "a", "handler": "shell", "config": {"command": "echo \"$TOKEN\"", "env": {"TOKEN": "<< secret.TOKEN >>"}}},
			{"id": "b", "handler": "http", "depends_on": ["a"], "config": {"url": "https://x/<< a.stdout >>?k=<< secret.KEY >>", "headers": {"Authorization": "Bearer << secret.API_TOKEN >>"}}}`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := Parse(tc.input)
			require.NoError(t, err)
			require.NoError(t, d.Validate())
		})
	}
}

func TestValidateTooManyNodes(t *testing.T) {
	t.Parallel()
	d := &Definition{Name: "big", Nodes: chain(MaxNodes + 1)}
	require.Equal(t, []Problem{{"$.nodes", "workflow has 10001 nodes; the limit is 10000"}}, problemsOf(t, d.Validate()))
}

func TestValidateInvalidRawJSON(t *testing.T) {
	t.Parallel()
	d := &Definition{Name: "wf", Nodes: []Node{{ID: "a", Handler: "noop", Config: []byte(`{"x": `), Parallel: []byte(`{`)}}}
	require.Equal(t, []Problem{
		{"$.nodes[0].parallel", "parallel must be a positive integer or a template, got an object"},
		{"$.nodes[0].config", "config is not valid JSON"},
	}, problemsOf(t, d.Validate()))
}

func TestLongCycleMessageIsElided(t *testing.T) {
	t.Parallel()
	nodes := chain(100)
	nodes[0].DependsOn = []string{"n99"}
	problems := problemsOf(t, (&Definition{Name: "wf", Nodes: nodes}).Validate())
	require.Len(t, problems, 1)
	require.Equal(t, "$.nodes[0].depends_on[0]", problems[0].Path)
	require.Contains(t, problems[0].Message, "cycle: n0 -> n1 -> ")
	require.Contains(t, problems[0].Message, " -> ... (61 more) -> ")
	require.True(t, len(problems[0].Message) < 500)
}

func TestProblemsAreCapped(t *testing.T) {
	t.Parallel()
	nodes := make([]Node, 2*MaxProblems)
	for i := range nodes {
		nodes[i].ID = "n" + strconv.Itoa(i)
	}
	problems := problemsOf(t, (&Definition{Name: "wf", Nodes: nodes}).Validate())
	require.Len(t, problems, MaxProblems+1)
	require.Equal(t, Problem{"$.nodes[999].handler", "handler is required"}, problems[MaxProblems-1])
	require.Equal(t, Problem{"$", "1000 more problems not shown"}, problems[MaxProblems])
}

func TestDeeplyNestedConfig(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"a": [`, 1000) + `"<< ghost >>"` + strings.Repeat(`]}`, 1000)
	problems := problemsOf(t, (&Definition{Name: "wf", Nodes: []Node{{ID: "a", Handler: "noop", Config: []byte(deep)}}}).Validate())
	require.Len(t, problems, 1)
	require.Equal(t, "$.nodes[0].config"+strings.Repeat(".a[0]", 1000), problems[0].Path)
	require.Equal(t, `template references unknown node "ghost"`, problems[0].Message)
}

func TestUnknownRootSuggestsTheNearest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ ref, want string }{
		{"inputs.who", `template references unknown node "inputs"; did you mean "input"?`},
		{"fetch_user.id", `template references unknown node "fetch_user"; did you mean "fetch_users"?`},
		{"secrets.TOKEN", `template references unknown node "secrets"; did you mean "secret"?`},
		{"x", `template references unknown node "x"`},         // too short to be a misspelling of anything
		{"ghost", `template references unknown node "ghost"`}, // nothing near
		{"itemz", `template references unknown node "itemz"`}, // "item" and "items" tie
	} {
		def := wf(`{"id": "fetch_users", "handler": "noop"}, {"id": "items", "handler": "noop"},
			{"id": "a", "handler": "noop", "depends_on": ["fetch_users", "items"], "config": {"v": "<< ` + tc.ref + ` >>"}}`)
		_, err := Parse([]byte(def))
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, tc.ref)
		require.Len(t, ve.Problems, 1, tc.ref)
		require.Equal(t, tc.want, ve.Problems[0].Message, tc.ref)
	}
}
