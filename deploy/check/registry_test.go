package check

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// root is the repository root, relative to this package.
const root = "../.."

var braidVar = regexp.MustCompile(`"(BRAID_[A-Z0-9_]+)"`)

// knownVars is the registry of BRAID_* variables: every one the services'
// configuration (pkg/envconf and each service's internal/config, the only
// code that reads the environment) and the CLI read.
func knownVars(t *testing.T) map[string]bool {
	t.Helper()
	var files []string
	for _, pattern := range []string{"pkg/envconf/*.go", "services/*/internal/config/*.go", "cmd/braid/internal/cli/*.go", "cmd/braid/internal/devstack/*.go"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		require.NoError(t, err)
		files = append(files, m...)
	}
	known := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range braidVar.FindAllStringSubmatch(string(b), -1) {
			known[m[1]] = true
		}
	}
	require.Greater(t, len(known), 20, "the registry found too few variables: %v", known)
	return known
}

// requireKnown fails for every name in vars that no service reads.
func requireKnown(t *testing.T, where string, vars []string) {
	t.Helper()
	known := knownVars(t)
	for _, v := range vars {
		require.True(t, known[v], "%s sets %s, which no service reads", where, v)
	}
}

// TestREADMEDocumentsEveryVariable: the README's configuration table names
// every variable of the registry, and nothing else.
func TestREADMEDocumentsEveryVariable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	readme := string(b)
	start := strings.Index(readme, "## Configuration")
	require.Positive(t, start, "README has a Configuration section")
	section := readme[start:]
	if end := strings.Index(section[3:], "\n## "); end > 0 {
		section = section[:end+3]
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`(BRAID_[A-Z0-9_]+)`").FindAllStringSubmatch(section, -1) {
		documented[m[1]] = true
	}
	var missing, unknown []string
	known := knownVars(t)
	for v := range known {
		if !documented[v] {
			missing = append(missing, v)
		}
	}
	for v := range documented {
		if !known[v] {
			unknown = append(unknown, v)
		}
	}
	sort.Strings(missing)
	sort.Strings(unknown)
	require.Empty(t, missing, "variables missing from README's configuration table")
	require.Empty(t, unknown, "README documents variables no service reads")
}
