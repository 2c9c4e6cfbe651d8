package template

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestResolveShellQuoting(t *testing.T) {
	t.Parallel()
	scope := MapScope{"v": `it's "$x"`, "n": 3, "o": map[string]any{"a": "b'c"}, "nl": "a\nb"}
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{name: "unquoted", input: "echo << v >>", want: `echo 'it'\''s "$x"'`},
		{name: "unquoted in word", input: "echo a<<v>>b", want: `echo a'it'\''s "$x"'b`},
		{name: "double", input: `echo "<< v >>"`, want: `echo "it's \"\$x\""`},
		{name: "single", input: `echo '<< v >>'`, want: `echo 'it'\''s "$x"'`},
		{name: "number", input: "sleep << n >>", want: "sleep '3'"},
		{name: "object", input: "echo << o >>", want: `echo '{"a":"b'\''c"}'`},
		{name: "no templates", input: "ls -l | wc -l", want: "ls -l | wc -l"},
		{name: "escaped heredoc-like text in quotes", input: `echo '\<<' << n >>`, want: `echo '<<' '3'`},
		{name: "here-string", input: `cat \<<< << n >>`, want: `cat <<< '3'`},
		{name: "double after closed single", input: `echo 'a"' "<< n >>"`, want: `echo 'a"' "3"`},
		{name: "escaped quote in double", input: `echo "a\"<< v >>"`, want: `echo "a\"it's \"\$x\""`},
		{name: "escaped quote unquoted", input: `echo \'<< n >>`, want: `echo \''3'`},
		{name: "cmdsub in double is unquoted", input: `echo "$(echo << v >>)"`, want: `echo "$(echo 'it'\''s "$x"')"`},
		{name: "double in cmdsub in double", input: `echo "$(echo "<< n >>")"`, want: `echo "$(echo "3")"`},
		{name: "after cmdsub closes", input: `echo "$(true)<< v >>"`, want: `echo "$(true)it's \"\$x\""`},
		{name: "subshell parens", input: `(cd /; echo << n >>)`, want: `(cd /; echo '3')`},
		{name: "nested cmdsub with parens", input: `x=$( (echo) ); echo "<< n >>"`, want: `x=$( (echo) ); echo "3"`},
		{name: "param before", input: `echo "${HOME}<< n >>" ${x:-y}<< n >>`, want: `echo "${HOME}3" ${x:-y}'3'`},
		{name: "arith closes", input: `echo $((1+(2))) << n >>`, want: `echo $((1+(2))) '3'`},
		{name: "backtick closes", input: "echo `date` << n >>", want: "echo `date` '3'"},
		{name: "special params", input: `echo $$<< n >> "$#<< n >>"`, want: `echo $$'3' "$#3"`},
		{name: "comment", input: "echo hi # << nl >>\necho << n >>", want: "echo hi # 'a b'\necho '3'"},
		{name: "hash inside word is not a comment", input: "echo a#<< nl >>", want: "echo a#'a\nb'"},
		{name: "hash after template is not a comment", input: "echo << n >>#<< nl >>", want: "echo '3'#'a\nb'"},
		{name: "comment inside cmdsub", input: "x=$(# << nl >>\necho)", want: "x=$(# 'a b'\necho)"},
		{name: "continuation then comment", input: "echo \\\n# << nl >>\necho << n >>", want: "echo \\\n# 'a b'\necho '3'"},
		{name: "continuation between args", input: "curl \\\n  -d << n >> \\\n  url", want: "curl \\\n  -d '3' \\\n  url"},
		{name: "escaped backslash before newline", input: "echo \\\\\n# << nl >>", want: "echo \\\\\n# 'a b'"},
		{name: "dollar before closing double quote", input: `x=$("$")<< nl >>`, want: "x=$(\"$\")'a\nb'"},
		{name: "dollar quote inside double is literal", input: `echo "$'" "<< n >>"`, want: `echo "$'" "3"`},
		{name: "locale quoting", input: `echo $"<< v >>"`, want: `echo $"it's \"\$x\""`},
		{name: "case at top level", input: "case x in x) echo << n >>;; esac", want: "case x in x) echo '3';; esac"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ResolveShell(tt.input, scope)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestResolveShellRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		wantErr string
	}{
		{name: "backticks", input: "echo `echo << v >>`", wantErr: "shell template \"<< v >>\" at offset 11: cannot quote a value safely here: inside `...`"},
		{name: "param", input: `echo ${x:-<< v >>}`, wantErr: `shell template "<< v >>" at offset 10: cannot quote a value safely here: inside ${...}`},
		{name: "arith", input: `echo $((1 + << v >>))`, wantErr: `shell template "<< v >>" at offset 12: cannot quote a value safely here: inside $((...))`},
		{name: "after dollar", input: `echo $<< v >>`, wantErr: `shell template "<< v >>" at offset 6: cannot quote a value safely here: directly after "$"`},
		{name: "after dollar in double", input: `echo "$<< v >>"`, wantErr: `shell template "<< v >>" at offset 7: cannot quote a value safely here: directly after "$"`},
		{name: "heredoc body", input: "cat \\<<EOF\n<< v >>\nEOF", wantErr: `shell template "<< v >>" at offset 11: cannot quote a value safely here: after a here-document`},
		{name: "ansi-c", input: `echo $'a\'' << v >>`, wantErr: `shell template "<< v >>" at offset 12: cannot quote a value safely here: after ANSI-C quoting $'...'`},
		{name: "bash arith brackets", input: `echo $[1] << v >>`, wantErr: `shell template "<< v >>" at offset 10: cannot quote a value safely here: after arithmetic $[...]`},
		{name: "bash arith command", input: `(( x = << v >> ))`, wantErr: `shell template "<< v >>" at offset 7: cannot quote a value safely here: after arithmetic command ((...))`},
		{name: "case in cmdsub", input: `x=$(case a in a) echo;; esac; echo << v >>)`, wantErr: `shell template "<< v >>" at offset 35: cannot quote a value safely here: after "case" inside $(...)`},
		{name: "quotes in param", input: `echo ${x:-"}"} << v >>`, wantErr: `shell template "<< v >>" at offset 15: cannot quote a value safely here: after quoting or command substitution inside ${...}`},
		{name: "odd arith", input: `echo $((1)+1) << v >>`, wantErr: `shell template "<< v >>" at offset 14: cannot quote a value safely here: after unusual syntax inside $((...))`},
		{name: "continuation splits $(", input: "echo \"$\\\n(echo << v >>)\"", wantErr: `shell template "<< v >>" at offset 15: cannot quote a value safely here: after a line continuation inside an operator`},
		{name: "bash array", input: `a=(x y) << v >>`, wantErr: `shell template "<< v >>" at offset 8: cannot quote a value safely here: after array assignment =(...)`},
		{name: "nul byte", input: `echo << nul >>`, wantErr: `shell template "<< nul >>" at offset 5: value contains a NUL byte`},
		{name: "syntax", input: `echo << v`, wantErr: `template syntax error at offset 5: unterminated "<<"`},
		{name: "missing", input: `echo << w >>`, wantErr: `template "<< w >>": node "w" has no output`},
	}
	scope := MapScope{"v": "x", "nul": "a\x00b"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ResolveShell(tt.input, scope)
			require.EqualError(t, err, tt.wantErr)
			if strings.Contains(tt.wantErr, "cannot quote") {
				require.ErrorIs(t, err, ErrUnsafeShellContext)
			}
		})
	}
}
