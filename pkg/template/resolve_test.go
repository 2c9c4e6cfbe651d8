package template

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// decode decodes JSON text the way callers do (UseNumber).
func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

// testScope is the scope shared by the resolution tests.
func testScope(t *testing.T) MapScope {
	t.Helper()
	return MapScope{
		"fetch": decode(t, `{"body": {"name": "Ada", "tags": ["x", "y"], "n": null, "meta": {"k": 1}},
			"status": 200, "ok": true, "ratio": 0.5, "items": [{"id": "a"}, {"id": "b", "sub": [10, 20]}],
			"html": "<a&b>", "empty": ""}`),
		"my-node": decode(t, `"dash"`),
		"input":   decode(t, `{"date": "2026-01-01", "who": "ÉVE"}`),
		"item":    decode(t, `{"file": "f.txt"}`),
		"index":   2,
		"count":   int64(5),
		"nul":     nil,
	}
}

func TestResolveString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		want  any
	}{
		{name: "whole object", input: "<< fetch.body.meta >>", want: map[string]any{"k": json.Number("1")}},
		{name: "whole array", input: "<<fetch.body.tags>>", want: []any{"x", "y"}},
		{name: "whole number", input: "<< fetch.status >>", want: json.Number("200")},
		{name: "whole float", input: "<< fetch.ratio >>", want: json.Number("0.5")},
		{name: "whole bool", input: "<< fetch.ok >>", want: true},
		{name: "whole null", input: "<< fetch.body.n >>", want: nil},
		{name: "whole null root", input: "<< nul >>", want: nil},
		{name: "whole string", input: "<<  fetch.body.name\t>>", want: "Ada"},
		{name: "whole int index", input: "<< index >>", want: 2},
		{name: "whole root", input: "<< my-node >>", want: "dash"},
		{name: "surrounding space interpolates", input: " << fetch.status >>", want: " 200"},
		{name: "two templates interpolate", input: "<<index>><<count>>", want: "25"},
		{name: "interpolate all types", input: "s=<<fetch.body.name>> n=<<fetch.status>> f=<<fetch.ratio>> b=<<fetch.ok>> z=<<fetch.body.n>> o=<<fetch.body.meta>> a=<<fetch.body.tags>> i=<<count>>",
			want: `s=Ada n=200 f=0.5 b=true z=null o={"k":1} a=["x","y"] i=5`},
		{name: "no html escaping", input: "x <<fetch.html>> <<fetch | length>>", want: "x <a&b> 7"},
		{name: "index path", input: "<< fetch.items[1].sub[0] >>", want: json.Number("10")},
		{name: "index then key", input: "id=<<fetch.items[0].id>>", want: "id=a"},
		{name: "no templates", input: "plain", want: "plain"},
		{name: "escaped", input: `\<< fetch.status >>`, want: "<< fetch.status >>"},
		{name: "escaped beside template", input: `\<<<<fetch.status>>>>`, want: "<<200>>"},
		{name: "lone backslash kept", input: `a\b \< <<index>>`, want: `a\b \< 2`},
		{name: "default on missing key", input: `<< fetch.body.nick | default "anon" >>`, want: "anon"},
		{name: "default on missing root", input: `<< ghost.x | default "g" >>`, want: "g"},
		{name: "default on null", input: `<< fetch.body.n | default "nil" >>`, want: "nil"},
		{name: "default on wrong type", input: `<< fetch.status.x | default 1 >>`, want: json.Number("1")},
		{name: "default not used", input: `<< fetch.body.name | default "anon" >>`, want: "Ada"},
		{name: "default empty string kept", input: `<< fetch.empty | default "x" >>`, want: ""},
		{name: "default literals", input: `<<a|default true>> <<a|default false>> <<a|default null>> <<a|default -1.5e3>>`, want: "true false null -1.5e3"},
		{name: "default escapes", input: `<< a | default "say \"hi\" \\ >>" >>`, want: `say "hi" \ >>`},
		{name: "default then upper", input: `<< fetch.body.nick | default "x" | upper >>`, want: "X"},
		{name: "missing passes filters to default", input: `<< fetch.body.nick | upper | default "y" >>`, want: "y"},
		{name: "upper", input: "<< fetch.body.name | upper >>", want: "ADA"},
		{name: "lower unicode", input: "<< input.who | lower >>", want: "éve"},
		{name: "json string", input: "<< fetch.body.name | json >>", want: `"Ada"`},
		{name: "json object", input: "<< fetch.body.meta|json >>", want: `{"k":1}`},
		{name: "json null", input: "<< fetch.body.n | json >>", want: "null"},
		{name: "length runes", input: "<< input.who | length >>", want: json.Number("3")},
		{name: "length array", input: "<< fetch.items | length >>", want: json.Number("2")},
		{name: "length object", input: "<< fetch.body | length >>", want: json.Number("4")},
		{name: "chain json length", input: "<< fetch.body.tags | json | length >>", want: json.Number("9")},
	}
	scope := testScope(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ResolveString(tt.input, scope)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestResolveJSON(t *testing.T) {
	t.Parallel()
	scope := testScope(t)
	in := decode(t, `{"url": "http://svc/<<item.file>>", "body": {"<<k>>": "<<fetch.body.tags>>", "n": 3, "list": ["<<index>>", false, null]}}`)
	before, err := json.Marshal(in)
	require.NoError(t, err)

	got, err := Resolve(in, scope)
	require.NoError(t, err)
	require.Equal(t, map[string]any{
		"url":  "http://svc/f.txt",
		"body": map[string]any{"<<k>>": []any{"x", "y"}, "n": json.Number("3"), "list": []any{2, false, nil}},
	}, got)

	after, err := json.Marshal(in)
	require.NoError(t, err)
	require.JSONEq(t, string(before), string(after), "input must not be mutated")

	_, err = Resolve([]any{"ok", map[string]any{"x": "<< fetch.nope >>"}}, scope)
	require.EqualError(t, err, `template "<< fetch.nope >>": key "nope" not found in fetch`)
	_, err = Resolve(map[string]any{"x": "<< fetch | bad >>"}, scope)
	require.EqualError(t, err, `template syntax error at offset 11: unknown filter "bad"`)
}
