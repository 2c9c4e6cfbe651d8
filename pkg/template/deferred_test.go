package template

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestResolveDeferringLeavesSecretsAsSlots(t *testing.T) {
	t.Parallel()
	scope := MapScope{"input": map[string]any{"user": "alice", "evil": "<< secret.ADMIN >>", "n": json.Number("7")}}
	cfg := map[string]any{
		"url":     "https://x/<< input.user >>?k=<< secret.KEY >>&n=<< input.n >>",
		"headers": map[string]any{"Authorization": "Bearer << secret.API_TOKEN >>", "X-User": "<< input.evil >>"},
		"list":    []any{"plain", "<< secret.ONE >>", json.Number("3")},
		"escaped": `\<< secret.NOT >>`,
		"a/b~c":   "<< secret.KEY >><< secret.KEY >>",
	}
	out, slots, err := ResolveDeferring(cfg, scope, "secret")
	require.NoError(t, err)
	m := out.(map[string]any)
	require.Equal(t, "", m["url"])
	require.Equal(t, "<< secret.ADMIN >>", m["headers"].(map[string]any)["X-User"], "substituted data is never a template")
	require.Equal(t, "<< secret.NOT >>", m["escaped"])
	require.Equal(t, []any{"plain", "", json.Number("3")}, m["list"])
	require.Equal(t, []Slot{
		{Path: []string{"a/b~c"}, Parts: []Part{{Ref: "KEY"}, {Ref: "KEY"}}},
		{Path: []string{"headers", "Authorization"}, Parts: []Part{{Text: "Bearer "}, {Ref: "API_TOKEN"}}},
		{Path: []string{"list", "1"}, Parts: []Part{{Ref: "ONE"}}},
		{Path: []string{"url"}, Parts: []Part{{Text: "https://x/alice?k="}, {Ref: "KEY"}, {Text: "&n=7"}}},
	}, slots)
	require.Equal(t, "/a~1b~0c", slots[0].Pointer())
	require.Equal(t, "https://x/<< input.user >>?k=<< secret.KEY >>&n=<< input.n >>", cfg["url"], "the input is not mutated")

	vals := map[string]string{"KEY": "k1", "API_TOKEN": "t\"ok", "ONE": "1"}
	filled, err := Fill(out, slots, func(n string) (string, bool) { v, ok := vals[n]; return v, ok })
	require.NoError(t, err)
	f := filled.(map[string]any)
	require.Equal(t, "https://x/alice?k=k1&n=7", f["url"])
	require.Equal(t, "Bearer t\"ok", f["headers"].(map[string]any)["Authorization"])
	require.Equal(t, "k1k1", f["a/b~c"])
	require.Equal(t, []any{"plain", "1", json.Number("3")}, f["list"])

	_, err = Fill(out, slots, func(string) (string, bool) { return "", false })
	var missing *MissingError
	require.ErrorAs(t, err, &missing)
	require.Equal(t, "KEY", missing.Name)
}

func TestResolveDeferringWholeValueAndErrors(t *testing.T) {
	t.Parallel()
	out, slots, err := ResolveDeferring("<< secret.X >>", MapScope{}, "secret")
	require.NoError(t, err)
	require.Equal(t, "", out)
	require.Equal(t, []Slot{{Parts: []Part{{Ref: "X"}}}}, slots)
	require.Equal(t, "", slots[0].Pointer())
	filled, err := Fill(out, slots, func(string) (string, bool) { return "v", true })
	require.NoError(t, err)
	require.Equal(t, "v", filled)

	for _, bad := range []string{"<< secret.X | upper >>", "<< secret.X.y >>", "<< secret[0] >>", "<< secret >>"} {
		_, _, err := ResolveDeferring(map[string]any{"a": bad}, MapScope{}, "secret")
		require.Error(t, err, bad)
		_, err = DeferredNames(bad, "secret")
		require.Error(t, err, bad)
	}
	_, _, err = ResolveDeferring(map[string]any{"a": "<< input.missing >> << secret.X >>"}, MapScope{"input": map[string]any{}}, "secret")
	require.ErrorContains(t, err, "missing")

	names, err := DeferredNames("<< secret.A >>-<< input.x >>-<< secret.B >>", "secret")
	require.NoError(t, err)
	require.Equal(t, []string{"A", "B"}, names)
}

func TestFillRejectsBadPaths(t *testing.T) {
	t.Parallel()
	v := map[string]any{"a": []any{"x"}, "n": json.Number("1")}
	for _, path := range [][]string{{"zz"}, {"a", "1"}, {"a", "01"}, {"a", "-1"}, {"n"}, {"a", "0", "deeper"}} {
		_, err := Fill(v, []Slot{{Path: path, Parts: []Part{{Text: "t"}}}}, nil)
		require.Error(t, err, "%v", path)
	}
	toks, err := ParsePointer("/a~1b/~0c/0")
	require.NoError(t, err)
	require.Equal(t, []string{"a/b", "~c", "0"}, toks)
	_, err = ParsePointer("a")
	require.Error(t, err)
}
