package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/runstate"
	"github.com/braidhq/braid/pkg/statestore"
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
	require.Equal(t, string(runstate.RunSucceeded), st.Fields[statestore.FieldStatus], st.Fields[statestore.FieldError])
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
