package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidateOffline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"name":"ok","nodes":[{"id":"a","handler":"noop"},
		{"id":"b","handler":"noop","depends_on":["a"]}]}`), 0o600))
	require.NoError(t, os.WriteFile(bad, []byte(`{"name":"bad","nodes":[{"id":"a","handler":"noop","depends_on":["b"]},
		{"id":"b","handler":"noop","depends_on":["a"]},{"id":"c","handler":"noop","trigger_rule":"sometimes"}]}`), 0o600))
	// No API is reachable: validate never needs one.
	env := map[string]string{"BRAID_URL": "http://127.0.0.1:1"}

	res := braid(t, env, "", "validate", "-f", good)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, good+": valid (workflow ok, 2 nodes)\n", res.stdout)

	res = braid(t, env, "", "validate", "-f", good, "-f", bad)
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stdout, bad+": invalid")
	require.Regexp(t, `(?m)^  \$\.nodes\[\d\]\.depends_on\[0\]: .*cycle`, res.stdout)
	require.Regexp(t, `(?m)^  \$\.nodes\[2\]\.trigger_rule: `, res.stdout)

	res = braid(t, env, "", "validate", "-f", bad, "-o", "json")
	require.Equal(t, 1, res.code)
	var v validation
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &v))
	require.False(t, v.Valid)
	require.GreaterOrEqual(t, len(v.Problems), 2)

	res = braid(t, env, "not json", "validate", "-f", "-")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stdout, "-: invalid")

	res = braid(t, env, "", "validate", "-f", filepath.Join(dir, "missing.json"))
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "missing.json")
}

// TestDefinitionDirectories: -f DIR stands for the .json files directly in
// it, in name order; an empty one is an error, and reading a directory as
// a file is not reported with its path twice.
func TestDefinitionDirectories(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"b.json":     `{"name":"second","nodes":[{"id":"a","handler":"noop"}]}`,
		"a.json":     `{"name":"first","nodes":[{"id":"a","handler":"noop"}]}`,
		"notes.txt":  `not a definition`,
		"sub/c.json": `{"name":"nested","nodes":[{"id":"a","handler":"noop"}]}`,
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
	env := map[string]string{"BRAID_URL": "http://127.0.0.1:1"}
	res := braid(t, env, "", "validate", "-f", dir)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, filepath.Join(dir, "a.json")+": valid (workflow first, 1 node)\n"+
		filepath.Join(dir, "b.json")+": valid (workflow second, 1 node)\n", res.stdout)

	var posted []string
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"POST /workflows": func(w http.ResponseWriter, r *http.Request) {
			var def struct{ Name string }
			_ = json.NewDecoder(r.Body).Decode(&def)
			posted = append(posted, def.Name)
			reply(http.StatusCreated, `{"name":"`+def.Name+`","version":1}`)(w, r)
		},
	})
	res = braid(t, api.env("k"), "", "apply", "-f", dir)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, []string{"first", "second"}, posted)

	empty := filepath.Join(dir, "sub", "empty")
	require.NoError(t, os.Mkdir(empty, 0o700))
	res = braid(t, env, "", "validate", "-f", empty)
	require.Equal(t, 1, res.code)
	require.Equal(t, "error: "+empty+": a directory with no .json file\n", res.stderr)

	require.Equal(t, []string{"-"}, must(definitionFiles([]string{"-"})))
	_, err := readFile(dir, nil)
	require.EqualError(t, err, "read "+dir+": is a directory")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestValidateExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../../../examples/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	args := []string{"validate"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	res := braid(t, nil, "", args...)
	require.Equal(t, 0, res.code, res.stdout)
}
