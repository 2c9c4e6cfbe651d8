package template

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostileValues are values that would run `touch F` (or otherwise misbehave) if a template could
// inject shell syntax.
var hostileValues = []string{
	"; touch F", "$(touch F)", "`touch F`", "'", `"`, `\`, "\ntouch F\n", "&& touch F", "| touch F",
	"$HOME", "${IFS}", "*", ">F", "<F", "#", "# x\ntouch F", "héllo wörld ✓ 日本語 \u202e",
	"'; touch F; '", `"; touch F; "`, `\'; touch F; \'`, `\"; touch F; \"`, "\\\n", `$'\x41'`,
	"') ; touch F ; ('", "\"$(touch F)\"", "'$(touch F)'", "EOF\ntouch F\nEOF", ") touch F (",
	"}", "${x:-$(touch F)}", "$((1+1))", "~", "-n", "", "  spaced  out  ", "\t\r\n", "!! !$",
	"a\\'b\\\"c", strings.Repeat("a'b\"c$d`e\\f;|&>F\n ", 1000),
}

// shellCase places the template << v >> in one quoting context; want maps the hostile value
// to the exact expected output.
type shellCase struct {
	name string
	cmd  string
	want func(string) string
}

var shellCases = []shellCase{
	{name: "unquoted", cmd: `printf %s << v >>`},
	{name: "double", cmd: `printf %s "<< v >>"`},
	{name: "single", cmd: `printf %s '<< v >>'`},
	{name: "mixed word", cmd: `printf %s "[<< v >>]"'(<< v >>)'<< v >>`, want: func(h string) string { return "[" + h + "](" + h + ")" + h }},
	{name: "cmdsub", cmd: `x=$(printf %s << v >>; echo .); printf %s "${x%.}"`},
	{name: "double cmdsub double", cmd: `x="$(printf %s "<< v >>"; echo .)"; printf %s "${x%.}"`},
	{name: "single in cmdsub in double", cmd: `x="$(printf %s '<< v >>'; echo .)"; printf %s "${x%.}"`},
	{name: "subshell", cmd: `(printf %s << v >>)`},
	{name: "comment", cmd: "printf %s ok # << v >>\n", want: func(string) string { return "ok" }},
	{name: "continuation", cmd: "printf %s \\\n<< v >>"},
	{name: "comment after continuation", cmd: "printf %s ok \\\n# << v >>\n", want: func(string) string { return "ok" }},
	{name: "comment in cmdsub", cmd: "x=$(# << v >>\nprintf %s ok); printf %s \"$x\"", want: func(string) string { return "ok" }},
}

func TestResolveShellHostileExecuted(t *testing.T) {
	t.Parallel()
	shells := []string{"/bin/sh"}
	if bash, err := exec.LookPath("bash"); err == nil {
		shells = append(shells, bash)
	}
	for i, h := range hostileValues {
		t.Run(strings.ReplaceAll(truncate(h, 20), "/", "_"), func(t *testing.T) {
			t.Parallel()
			for _, sc := range shellCases {
				cmd, err := ResolveShell(sc.cmd, MapScope{"v": h})
				require.NoError(t, err, "value %d in %s", i, sc.name)
				want := h
				if sc.want != nil {
					want = sc.want(h)
				}
				for _, sh := range shells {
					runHostile(t, sh, cmd, want, sc.name)
				}
			}
		})
	}
}

// runHostile runs cmd with sh -c in an empty temp dir and checks its output and that it created
// no file.
func runHostile(t *testing.T, sh, cmd, want, ctxName string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, sh, "-c", cmd)
	c.Dir = dir
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent-home", "LC_ALL=C.UTF-8"}
	out, err := c.Output()
	require.NoError(t, err, "%s in %s context: %q", sh, ctxName, truncate(cmd, 200))
	require.Equal(t, want, string(out), "%s in %s context: %q", sh, ctxName, truncate(cmd, 200))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "%s in %s context created files: %q", sh, ctxName, truncate(cmd, 200))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
