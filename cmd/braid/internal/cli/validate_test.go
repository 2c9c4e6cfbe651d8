package cli

import (
	"encoding/json"
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
