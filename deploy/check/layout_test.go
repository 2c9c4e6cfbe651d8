package check

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// goPackages lists the directories under the repository root that hold Go
// files (a package), relative to it.
func goPackages(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			if !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, len(out), 30, "found too few packages: %v", out)
	return out
}

var backticked = regexp.MustCompile("`([^`]+)`")

// layoutPaths are the paths README's Layout table names in backticks.
func layoutPaths(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	readme := string(b)
	start := strings.Index(readme, "\n## Layout\n")
	require.GreaterOrEqual(t, start, 0, "README has no Layout section")
	section := readme[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	named := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			named[strings.TrimSuffix(m[1], "/")] = true
		}
	}
	return named
}

// The README's layout table lists every package, and names none that is
// gone: a newcomer finds each package's role there.
func TestREADMELayoutNamesEveryPackage(t *testing.T) {
	t.Parallel()
	named := layoutPaths(t)
	for _, p := range goPackages(t) {
		require.True(t, named[p], "README's Layout table does not name the package %s", p)
	}
	for p := range named {
		_, err := os.Stat(filepath.Join(root, p))
		require.NoError(t, err, "README's Layout table names %s, which does not exist", p)
	}
}

// testOnly are import path fragments of packages that exist for tests and
// benchmarks only.
var testOnly = []string{"/pkg/testkit/", "/eventbustest", "/statestoretest"}

// No binary users run links a test-only package (or the testing package):
// test helpers stay out of the production import graph.
func TestBinariesLinkNoTestOnlyPackage(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"services/api", "services/orchestrator", "services/worker", "cmd/braid"} {
		cmd := exec.Command("go", "list", "-deps", ".")
		cmd.Dir = filepath.Join(root, bin)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go list -deps in %s: %s", bin, out)
		deps := strings.Fields(string(out))
		require.Greater(t, len(deps), 50, "%s: too few dependencies listed", bin)
		for _, d := range deps {
			require.NotEqual(t, "testing", d, "%s links the testing package", bin)
			for _, frag := range testOnly {
				require.NotContains(t, d, frag, "%s links %s, a test-only package", bin, d)
			}
		}
	}
}
