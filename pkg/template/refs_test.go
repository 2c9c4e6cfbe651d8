package template

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRoots(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		want    []string
		wantErr string
	}{
		{name: "none", input: "plain text", want: nil},
		{name: "one", input: "<< fetch.body.name >>", want: []string{"fetch"}},
		{name: "order and dedup", input: "<<b>> <<a.x[0]>> <<b.y>> << input.date | default \"x\" >>", want: []string{"b", "a", "input"}},
		{name: "dash id", input: "<<my-node.out>>", want: []string{"my-node"}},
		{name: "fanout roots", input: "<<item>>-<<index>>/<<count>> <<run.id>>", want: []string{"item", "index", "count", "run"}},
		{name: "escaped", input: `\<< not.a.template >>`, want: nil},
		{name: "unterminated", input: "abc << a.b", wantErr: `template syntax error at offset 4: unterminated "<<"`},
		{name: "unknown filter", input: "<< a | shout >>", wantErr: `template syntax error at offset 7: unknown filter "shout"`},
		{name: "empty", input: "<< >>", wantErr: `template syntax error at offset 3: expected a root name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Roots(tt.input)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				var se *SyntaxError
				require.ErrorAs(t, err, &se)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestRootsJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		want    []string
		wantErr bool
	}{
		{name: "nested", input: `{"url":"http://x/<<a.id>>","body":{"<<k>>":["<<b>>", 1, true, null, "<<a>>"]}}`, want: []string{"b", "a"}},
		{name: "scalars", input: `[1.5, false, null]`, want: nil},
		{name: "bad", input: `{"x":["ok", "<< a | nope >>"]}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dec := json.NewDecoder(strings.NewReader(tt.input))
			dec.UseNumber()
			var v any
			require.NoError(t, dec.Decode(&v))
			got, err := RootsJSON(v)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
