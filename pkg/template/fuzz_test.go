package template

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// recordingScope answers every root except those starting with "z" and records what was asked.
type recordingScope struct{ asked []string }

func (r *recordingScope) Root(name string) (any, bool) {
	if !slices.Contains(r.asked, name) {
		r.asked = append(r.asked, name)
	}
	v := map[string]any{"a": []any{"x", json.Number("1"), nil, map[string]any{"b": true}}, "s": "str'\"$"}
	return v, !strings.HasPrefix(name, "z")
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "plain", "<< a >>", "x << a.a[3].b | default \"q\\\"\" | upper >> y", `\<< a >>`, "<<a.s|length>>",
		"<< z | default 1 >>", "<< a | json | lower >>", "<<", "<< a", "<< a | nope >>", "<<a[99]>>", "<<a.a[0]>><<b>>",
		"echo \"<< a.s >>\" '<< a.s >>' << a.s >>", "$(echo << a >>) `<< a >>`", "<< a | default \"x>>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		roots, rootsErr := Roots(s)
		scope := &recordingScope{}
		_, err := ResolveString(s, scope)
		var se *SyntaxError
		if rootsErr != nil {
			require.ErrorAs(t, rootsErr, &se)
			require.Equal(t, rootsErr, err, "Roots and ResolveString disagree on syntax")
			return
		}
		for _, r := range scope.asked {
			require.Contains(t, roots, r, "resolved a root Roots did not report")
		}
		if err == nil {
			require.Equal(t, roots, scope.asked)
		} else {
			var te *Error
			require.ErrorAs(t, err, &te)
		}
		_, shErr := ResolveShell(s, &recordingScope{})
		var te *Error
		if shErr != nil && !errors.As(shErr, &te) && !errors.Is(shErr, ErrUnsafeShellContext) {
			require.Contains(t, shErr.Error(), "NUL byte")
		}
	})
}

func FuzzResolveShell(f *testing.F) {
	for _, h := range hostileValues[:len(hostileValues)-1] {
		for _, c := range [][2]string{
			{"echo ", ""}, {`echo "`, `"`}, {"echo '", "'"}, {`x=$(echo "`, `")`}, {"echo hi # ", "\n"},
			{"echo \"$(echo '", "')\""}, {"(echo a", ")"}, {"echo `date` ", ""}, {"echo $", ""},
		} {
			f.Add(c[0], c[1], h)
		}
	}
	f.Fuzz(func(t *testing.T, prefix, suffix, value string) {
		if strings.Contains(prefix+suffix, "<<") || strings.HasSuffix(prefix, `\`) || strings.HasSuffix(prefix, "<") {
			t.Skip("not a single-template command")
		}
		out, err := ResolveShell(prefix+"<< v >>"+suffix, MapScope{"v": value})
		if err != nil {
			require.True(t, errors.Is(err, ErrUnsafeShellContext) || strings.IndexByte(value, 0) >= 0, err)
			return
		}
		require.True(t, strings.HasPrefix(out, prefix) && strings.HasSuffix(out, suffix))
		lx := newShellLexer()
		lx.feed(prefix)
		kind := lx.top().kind
		want := value
		if kind == frameComment {
			want = strings.ReplaceAll(value, "\n", " ")
		}
		got, err := unquoteWord(out[len(prefix):len(out)-len(suffix)], kind)
		require.NoError(t, err)
		require.Equal(t, want, got)
	})
}

// unquoteWord is an independent model of sh quote removal over a substituted value q that starts
// (and must end) in the quoting state given by kind. It fails if q contains any byte that sh would
// treat as syntax or expansion: in unquoted state only ' and \' may appear; inside "..." an
// unescaped $, ` or " may not. This is the fuzz invariant: whatever the value, its quoted form is
// inert data that sh turns back into exactly the value.
func unquoteWord(q string, kind frameKind) (string, error) {
	start := map[frameKind]byte{frameCmd: 'u', frameSub: 'u', frameComment: 'u', frameSingle: 's', frameDouble: 'd'}[kind]
	state, out := start, []byte{}
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case state == 's' && c == '\'':
			state = 'u'
		case state == 's':
			out = append(out, c)
		case state == 'u' && c == '\'':
			state = 's'
		case state == 'u' && c == '\\' && i+1 < len(q) && q[i+1] == '\'':
			out = append(out, '\'')
			i++
		case state == 'u':
			return "", errors.New("unquoted byte " + string(c))
		case c == '\\' && i+1 < len(q) && strings.IndexByte("$`\"\\", q[i+1]) >= 0:
			out = append(out, q[i+1])
			i++
		case strings.IndexByte("$`\"\\", c) >= 0:
			return "", errors.New("active byte in double quotes " + string(c))
		default:
			out = append(out, c)
		}
	}
	if state != start {
		return "", errors.New("quoted value does not end in its starting state")
	}
	return string(out), nil
}
