package template

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// nodeScope is a Scope that knows which node ids exist.
type nodeScope struct {
	MapScope
	nodes map[string]bool
}

func (s nodeScope) HasNode(id string) bool { return s.nodes[id] }

func TestResolveErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		scope   func(MapScope) Scope
		wantErr string
		want    Error // Template, Root, Path, Key; Reason is checked through wantErr
	}{
		{name: "missing key", input: "<< fetch.body.name2 >>",
			wantErr: `template "<< fetch.body.name2 >>": key "name2" not found in fetch.body`,
			want:    Error{Template: "<< fetch.body.name2 >>", Root: "fetch", Path: "fetch.body.name2", Key: "name2"}},
		{name: "missing key in interpolation", input: "x << fetch.items[1].nope >> y",
			wantErr: `template "<< fetch.items[1].nope >>": key "nope" not found in fetch.items[1]`,
			want:    Error{Template: "<< fetch.items[1].nope >>", Root: "fetch", Path: "fetch.items[1].nope", Key: "nope"}},
		{name: "index out of range", input: "<<fetch.items[5]>>",
			wantErr: `template "<<fetch.items[5]>>": index 5 out of range in fetch.items (length 2)`,
			want:    Error{Template: "<<fetch.items[5]>>", Root: "fetch", Path: "fetch.items[5]", Key: "5"}},
		{name: "index non-array", input: "<< fetch.body[0] >>",
			wantErr: `template "<< fetch.body[0] >>": cannot index fetch.body with [0]: it is an object, not an array`,
			want:    Error{Template: "<< fetch.body[0] >>", Root: "fetch", Path: "fetch.body[0]", Key: "0"}},
		{name: "key of non-object", input: "<< fetch.body.name.first >>",
			wantErr: `template "<< fetch.body.name.first >>": cannot read key "first" of fetch.body.name: it is a string, not an object`,
			want:    Error{Template: "<< fetch.body.name.first >>", Root: "fetch", Path: "fetch.body.name.first", Key: "first"}},
		{name: "key of null", input: "<< fetch.body.n.x >>",
			wantErr: `template "<< fetch.body.n.x >>": cannot read key "x" of fetch.body.n: it is null, not an object`,
			want:    Error{Template: "<< fetch.body.n.x >>", Root: "fetch", Path: "fetch.body.n.x", Key: "x"}},
		{name: "key of array", input: "<< fetch.items.id >>",
			wantErr: `template "<< fetch.items.id >>": cannot read key "id" of fetch.items: it is an array, not an object`,
			want:    Error{Template: "<< fetch.items.id >>", Root: "fetch", Path: "fetch.items.id", Key: "id"}},
		{name: "node without output", input: "<< ghost.x >>",
			wantErr: `template "<< ghost.x >>": node "ghost" has no output`,
			want:    Error{Template: "<< ghost.x >>", Root: "ghost", Path: "ghost"}},
		{name: "unknown root", input: "<< ghost >>",
			scope:   func(m MapScope) Scope { return nodeScope{MapScope: m, nodes: map[string]bool{"fetch": true}} },
			wantErr: `template "<< ghost >>": unknown root "ghost"`,
			want:    Error{Template: "<< ghost >>", Root: "ghost", Path: "ghost"}},
		{name: "known node without output", input: "<< later >>",
			scope:   func(m MapScope) Scope { return nodeScope{MapScope: m, nodes: map[string]bool{"later": true}} },
			wantErr: `template "<< later >>": node "later" has no output`,
			want:    Error{Template: "<< later >>", Root: "later", Path: "later"}},
		{name: "reserved root unset", input: "<< run.id >>",
			wantErr: `template "<< run.id >>": root "run" is not set here`,
			want:    Error{Template: "<< run.id >>", Root: "run", Path: "run"}},
		{name: "upper non-string", input: "<< fetch.status | upper >>",
			wantErr: `template "<< fetch.status | upper >>": filter "upper": fetch.status is a number, not a string`,
			want:    Error{Template: "<< fetch.status | upper >>", Root: "fetch", Path: "fetch.status"}},
		{name: "lower null", input: "<< fetch.body.n | lower >>",
			wantErr: `template "<< fetch.body.n | lower >>": filter "lower": fetch.body.n is null, not a string`,
			want:    Error{Template: "<< fetch.body.n | lower >>", Root: "fetch", Path: "fetch.body.n"}},
		{name: "length bool", input: "<< fetch.ok | length >>",
			wantErr: `template "<< fetch.ok | length >>": filter "length": fetch.ok is a boolean, which has no length`,
			want:    Error{Template: "<< fetch.ok | length >>", Root: "fetch", Path: "fetch.ok"}},
		{name: "json unsupported", input: "<< weird | json >>",
			wantErr: `template "<< weird | json >>": filter "json": json: unsupported type: chan int`,
			want:    Error{Template: "<< weird | json >>", Root: "weird", Path: "weird"}},
		{name: "render unsupported", input: "x<< weird >>",
			wantErr: `template "<< weird >>": cannot render value: json: unsupported type: chan int`,
			want:    Error{Template: "<< weird >>", Root: "weird", Path: "weird"}},
		{name: "missing after filter without default", input: "<< fetch.x | upper >>",
			wantErr: `template "<< fetch.x | upper >>": key "x" not found in fetch`,
			want:    Error{Template: "<< fetch.x | upper >>", Root: "fetch", Path: "fetch.x", Key: "x"}},
	}
	base := testScope(t)
	base["weird"] = make(chan int)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var scope Scope = base
			if tt.scope != nil {
				scope = tt.scope(base)
			}
			_, err := ResolveString(tt.input, scope)
			require.EqualError(t, err, tt.wantErr)
			var te *Error
			require.ErrorAs(t, fmt.Errorf("node report: %w", err), &te)
			tt.want.Reason = te.Reason
			require.Equal(t, tt.want, *te)
		})
	}
}

func TestSyntaxErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		wantErr string
	}{
		{name: "unterminated", input: "a << b.c", wantErr: `offset 2: unterminated "<<"`},
		{name: "unterminated empty", input: "<<", wantErr: `offset 0: unterminated "<<"`},
		{name: "unterminated after filter", input: "x<<a|upper", wantErr: `offset 1: unterminated "<<"`},
		{name: "unterminated in default", input: `<<a|default "x>>`, wantErr: `offset 12: unterminated string literal`},
		{name: "heredoc needs escape", input: "cat <<EOF", wantErr: `offset 4: unterminated "<<"`},
		{name: "no root", input: "<< .a >>", wantErr: `offset 3: expected a root name`},
		{name: "empty key", input: "<< a. >>", wantErr: `offset 5: expected a key after "."`},
		{name: "bad index", input: "<< a[x] >>", wantErr: `offset 5: expected a non-negative index (at most 9 digits) and "]"`},
		{name: "negative index", input: "<< a[-1] >>", wantErr: `offset 5: expected a non-negative index (at most 9 digits) and "]"`},
		{name: "huge index", input: "<< a[1234567890] >>", wantErr: `offset 5: expected a non-negative index (at most 9 digits) and "]"`},
		{name: "space in path", input: "<< a .b >>", wantErr: `offset 5: unexpected '.' in template`},
		{name: "unknown filter", input: "<< a | shout >>", wantErr: `offset 7: unknown filter "shout"`},
		{name: "empty filter", input: "<< a | >>", wantErr: `offset 7: unexpected '>' in template`},
		{name: "default without arg", input: "<< a | default >>", wantErr: `offset 15: expected a literal ("text", number, true, false or null)`},
		{name: "default bad literal", input: "<< a | default anon >>", wantErr: `offset 15: expected a literal ("text", number, true, false or null)`},
		{name: "default bad number", input: "<< a | default 1.2.3 >>", wantErr: `offset 15: expected a literal ("text", number, true, false or null)`},
		{name: "bad escape", input: `<< a | default "\n" >>`, wantErr: `offset 16: invalid escape in string literal (only \" and \\)`},
		{name: "arg on json", input: "<< a | json 1 >>", wantErr: `offset 12: unexpected '1' in template`},
		{name: "single >", input: "<< a > >>", wantErr: `offset 5: unexpected '>' in template`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ResolveString(tt.input, MapScope{})
			require.EqualError(t, err, "template syntax error at "+tt.wantErr)
			var se *SyntaxError
			require.True(t, errors.As(err, &se))
			require.Equal(t, tt.input, se.Input)
			_, rerr := Roots(tt.input)
			require.Equal(t, err, rerr)
		})
	}
}
