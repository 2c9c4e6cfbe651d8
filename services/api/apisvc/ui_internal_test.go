package apisvc

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUIExamplesMatchTheRepository: the examples the UI's "Load examples"
// registers are the repository's own (run `make ui` after changing them).
func TestUIExamplesMatchTheRepository(t *testing.T) {
	t.Parallel()
	repo, err := filepath.Glob("../../../examples/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, repo)
	var index struct{ Files []string }
	b, err := fs.ReadFile(uiFS, "examples/index.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &index))
	var names []string
	for _, p := range repo {
		names = append(names, filepath.Base(p))
		want, err := os.ReadFile(p)
		require.NoError(t, err)
		got, err := fs.ReadFile(uiFS, "examples/"+filepath.Base(p))
		require.NoError(t, err, "run `make ui`")
		require.Equal(t, string(want), string(got), "%s differs from the repository's: run `make ui`", p)
	}
	slices.Sort(names)
	require.Equal(t, names, index.Files, "run `make ui`")
}

// TestUICSPForbidsInlineCode: the policy names no inline script or style
// and no other origin.
func TestUICSPForbidsInlineCode(t *testing.T) {
	t.Parallel()
	require.NotContains(t, uiCSP, "unsafe-")
	require.NotContains(t, uiCSP, "http")
	require.True(t, strings.HasPrefix(uiCSP, "default-src 'none'"))
}
