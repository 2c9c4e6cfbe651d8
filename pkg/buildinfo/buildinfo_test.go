package buildinfo

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGetReportsTheStampedBuild(t *testing.T) {
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	require.Equal(t, "dev", Get().Version, "unstamped")
	Version, Commit = "v1.2.3", "0123456789abcdef0123"
	i := Get()
	require.Equal(t, "v1.2.3", i.Version)
	require.Equal(t, "0123456789abcdef0123", i.Commit)
	require.NotEmpty(t, i.Go)
	require.Equal(t, "v1.2.3 (0123456789ab)", i.String())
	require.Equal(t, "dev", Info{Version: "dev"}.String())
}
