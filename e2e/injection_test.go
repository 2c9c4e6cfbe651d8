package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// TestTemplateInjectionNeverExecutes flows hostile values from an upstream
// output into shell commands, in every quoting context, and checks that the
// marker file is never created and the command saw the exact value.
func TestTemplateInjectionNeverExecutes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	hostile := []string{
		"; touch " + marker, "$(touch " + marker + ")", "`touch " + marker + "`", "' ; touch " + marker + " ; '",
		`" ; touch ` + marker + ` ; "`, "\ntouch " + marker, "&& touch " + marker, "| touch " + marker,
		"|| touch " + marker, "> " + marker, "$(touch " + marker + ")'\"", "\\'; touch " + marker,
		"${IFS}touch${IFS}" + marker, "$HOME", "*", "#; touch " + marker, "\r\ntouch " + marker,
		"'\"'\"'; touch " + marker, "<< input.x >>", "\\\"$(touch " + marker + ")\\\"",
	}
	require.Len(t, hostile, 20)
	e := startEngine(t, engineOpts{workers: 2})
	// The source node's config is itself templated: escape "<<" so the
	// values reach its output verbatim.
	escaped := make([]string, len(hostile))
	for i, v := range hostile {
		escaped[i] = strings.ReplaceAll(v, "<<", `\<<`)
	}
	values, err := json.Marshal(map[string]any{"values": escaped})
	require.NoError(t, err)
	nodes := []dag.Node{{ID: "src", Handler: "noop", Config: values}}
	contexts := map[string]string{
		"bare":   `printf %s << src.values[IDX] >>`,
		"double": `printf %s "<< src.values[IDX] >>"`,
		"single": `printf %s '<< src.values[IDX] >>'`,
	}
	type want struct{ node, value string }
	var wants []want
	for i, v := range hostile {
		for ctxName, cmd := range contexts {
			id := ctxName + "_" + itoa(i)
			cfg, _ := json.Marshal(map[string]string{"command": replaceIdx(cmd, i)})
			nodes = append(nodes, dag.Node{ID: id, Handler: "shell", DependsOn: []string{"src"}, Config: cfg})
			wants = append(wants, want{id, v})
		}
	}
	def, err := json.Marshal(dag.Definition{Name: "injection", Nodes: nodes})
	require.NoError(t, err)
	name, ver := e.register(def)
	st := e.wait(e.start(name, ver, `{"x":"SHOULD-NOT-APPEAR"}`), 60*time.Second)
	require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus], st.Fields[records.FieldError])
	_, err = os.Stat(marker)
	require.True(t, os.IsNotExist(err), "a hostile value executed: %s exists", marker)
	for _, w := range wants {
		var out struct{ Stdout string }
		require.NoError(t, json.Unmarshal([]byte(st.Outputs[w.node]), &out))
		require.Equal(t, w.value, out.Stdout, "node %s", w.node)
	}
}

func itoa(i int) string { return string(rune('a'+i/26)) + string(rune('a'+i%26)) }

func replaceIdx(cmd string, i int) string {
	out := []byte{}
	for j := 0; j < len(cmd); j++ {
		if j+3 <= len(cmd) && cmd[j:j+3] == "IDX" {
			out = append(out, []byte(jsonInt(i))...)
			j += 2
			continue
		}
		out = append(out, cmd[j])
	}
	return string(out)
}

func jsonInt(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestInjectionIntoWhenJQAndFilters flows hostile values — expr and jq code,
// template syntax, shell syntax — into `when` conditions, jq programs' input
// and template filters: each stays a value. A `when` decides on the value's
// content only, a jq program returns it unchanged, a filter transforms it
// as text, and no template in a value is ever resolved.
func TestInjectionIntoWhenJQAndFilters(t *testing.T) {
	t.Parallel()
	hostile := []string{
		`true || true`, `") or true or ("`, `1 == 1`, `src.values`, `input.x`, `$ENV`, `env`, `") | $ENV | ("`,
		`.[] | halt_error`, `"; touch /tmp/x"`, `<< input.x >>`, `\<< input.x >>`, `<< src.values[0] | upper >>`,
		`{{.}}`, `${x}`, "a\nb", `'`, `"`, `\`, `∀ unicode ☃`,
	}
	e := startEngine(t, engineOpts{workers: 2})
	escaped := make([]string, len(hostile))
	for i, v := range hostile {
		escaped[i] = strings.ReplaceAll(v, "<<", `\<<`)
	}
	values, err := json.Marshal(map[string]any{"values": escaped})
	require.NoError(t, err)
	nodes := []dag.Node{{ID: "src", Handler: "noop", Config: values}}
	for i, v := range hostile {
		idx := jsonInt(i)
		ref := "src.values[" + idx + "]"
		vj, _ := json.Marshal(v)
		jq, _ := json.Marshal(map[string]any{"jq": ".v", "input": map[string]string{"v": "<< " + ref + " >>"}})
		filt, _ := json.Marshal(map[string]string{"up": "<< " + ref + " | upper >>", "js": "<< " + ref + " | json >>", "len": "<< " + ref + " | length >>"})
		nodes = append(nodes,
			dag.Node{ID: "jq_" + itoa(i), Handler: "transform", DependsOn: []string{"src"}, Config: jq},
			dag.Node{ID: "match_" + itoa(i), Handler: "noop", DependsOn: []string{"src"}, When: ref + " == " + string(vj)},
			dag.Node{ID: "nomatch_" + itoa(i), Handler: "noop", DependsOn: []string{"src"}, When: ref + ` == "no such value"`},
			dag.Node{ID: "filter_" + itoa(i), Handler: "noop", DependsOn: []string{"src"}, Config: filt})
	}
	def, err := json.Marshal(dag.Definition{Name: "injection-values", Nodes: nodes})
	require.NoError(t, err)
	name, ver := e.register(def)
	st := e.wait(e.start(name, ver, `{"x":"SHOULD-NOT-APPEAR"}`), 60*time.Second)
	require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus], st.Fields[records.FieldError])
	for i, v := range hostile {
		var jqOut string
		require.NoError(t, json.Unmarshal([]byte(st.Outputs["jq_"+itoa(i)]), &jqOut), "jq_%d: %s", i, st.Outputs["jq_"+itoa(i)])
		require.Equal(t, v, jqOut, "jq returned something else for value %d", i)
		require.Equal(t, records.NodeSucceeded, nodeRecord(t, st, "match_"+itoa(i)).State, "value %d: the equal condition did not hold", i)
		require.True(t, nodeRecord(t, st, "nomatch_"+itoa(i)).WhenSkipped, "value %d turned a false condition true", i)
		var filt struct {
			Up, Js string
			Len    int
		}
		require.NoError(t, json.Unmarshal([]byte(st.Outputs["filter_"+itoa(i)]), &filt))
		var back string
		require.NoError(t, json.Unmarshal([]byte(filt.Js), &back), "value %d: json filter gave %q", i, filt.Js)
		require.Equal(t, v, back, "value %d", i)
		require.Equal(t, strings.ToUpper(v), filt.Up, "value %d", i)
		require.Equal(t, utf8.RuneCountInString(v), filt.Len, "value %d", i)
	}
	require.NotContains(t, strings.Join(mapValues(st.Outputs), ""), "SHOULD-NOT-APPEAR", "a template inside a value was resolved")
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
