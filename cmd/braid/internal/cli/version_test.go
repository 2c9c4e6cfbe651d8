package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/braidhq/braid/pkg/buildinfo"
	"github.com/stretchr/testify/require"
)

func TestVersionPrintsTheStampedBuild(t *testing.T) {
	defer func(v, c string) { buildinfo.Version, buildinfo.Commit = v, c }(buildinfo.Version, buildinfo.Commit)
	buildinfo.Version, buildinfo.Commit = "v0.9.0", "abcdef0123456789"
	res := braid(t, nil, "", "version")
	require.Equal(t, 0, res.code, res.stderr)
	require.True(t, strings.HasPrefix(res.stdout, "braid v0.9.0 (abcdef012345) (go"), res.stdout)
	res = braid(t, nil, "", "version", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var got buildinfo.Info
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &got))
	require.Equal(t, "v0.9.0", got.Version)
	require.Equal(t, "abcdef0123456789", got.Commit)
}
