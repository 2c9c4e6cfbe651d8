package template

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// randomFragments are pieces of shell syntax from which random contexts are built.
var randomFragments = []string{
	"echo ", "printf %s ", `"`, "'", "$(", ")", "(", "# ", "\n", "; ", "x=", "${a:-b}", "`true`", `\`,
	"\\\n", "$((1))", "a", " ", "| cat ", "&& ", "$", "{ ", "}", "$x", `\"`, `\'`, "case ", "esac",
	`$"`, "$'", `"$"`, "$$", "${#x}", "$[", "((", "$((", `'\''`, `"$(`, "`", "\\`", "\t", "x in a) ",
	";;", `\<<`, "<", "#", "\\\\", "!",
}

// breakoutValues each run `touch F` if they escape the context they are placed in.
var breakoutValues = []string{
	"$(touch F)", "`touch F`", "'$(touch F)'", "\"$(touch F)\"", "\ntouch F\n", "'\ntouch F\n'",
	"\"\ntouch F\n\"", ")\ntouch F\n(", "'\"`touch F`\"'", "\\'\n touch F #",
}

// TestResolveShellRandomContexts places break-out values in random, often malformed, contexts,
// runs every command that ResolveShell accepts, and checks that no value ever ran `touch F`.
func TestResolveShellRandomContexts(t *testing.T) {
	t.Parallel()
	accepted := runRandomContexts(t, 1, 60)
	require.Greater(t, accepted, 200, "too few random commands were accepted to mean anything")
}

// runRandomContexts tries iterations random commands from seed and returns how many were run.
func runRandomContexts(t *testing.T, seed uint64, iterations int) int {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	shells := []string{"/bin/sh"}
	if bash, err := exec.LookPath("bash"); err == nil {
		shells = append(shells, bash)
	}
	dir := t.TempDir()
	accepted := 0
	for range iterations {
		cmd := randomCommand(rng) + "<< v >>" + randomCommand(rng)
		for _, v := range breakoutValues {
			out, err := ResolveShell(cmd, MapScope{"v": v})
			if err != nil {
				var se *SyntaxError
				require.True(t, errors.Is(err, ErrUnsafeShellContext) || errors.As(err, &se), err)
				continue
			}
			accepted++
			for _, sh := range shells {
				runNoMarker(t, sh, dir, out)
			}
		}
	}
	return accepted
}

func randomCommand(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(8) {
		b.WriteString(randomFragments[rng.IntN(len(randomFragments))])
	}
	return b.String()
}

// runNoMarker runs cmd (whatever its exit status) and fails if it created dir/F. dash (/bin/sh)
// runs every command: it stops at a syntax error. bash only runs commands that `bash -n` accepts,
// because after some syntax errors (e.g. inside "$(...)") bash resumes parsing at the next line,
// which no quoting can defend against; ResolveShell output is meant for /bin/sh.
func runNoMarker(t *testing.T, sh, dir, cmd string) {
	t.Helper()
	if sh != "/bin/sh" && runShell(t, dir, sh, "-n", "-c", cmd) != nil {
		return
	}
	_ = runShell(t, dir, sh, "-c", cmd) // random contexts are often not valid shell
	_, err := os.Stat(filepath.Join(dir, "F"))
	require.True(t, os.IsNotExist(err), "%s ran an injected command: %q", sh, cmd)
}

// runShell runs sh with args in dir and returns its exit error.
func runShell(t *testing.T, dir, sh string, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, sh, args...)
	c.Dir = dir
	c.Env = []string{"PATH=" + os.Getenv("PATH")}
	err := c.Run()
	require.NoError(t, ctx.Err(), "timed out: %q", args)
	return err
}
