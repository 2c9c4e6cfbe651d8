package procstack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeBraid writes an executable script standing in for the braid binary:
// it records its arguments and runs body. StartInfra's real path runs in
// the e2e suite and the bench smoke test.
func fakeBraid(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "braid")
	script := "#!/bin/sh\necho \"args: $*\"\n" + body + "\n"
	require.NoError(t, os.WriteFile(path, []byte(script), 0o700))
	return path
}

func TestStartInfraReadsExports(t *testing.T) {
	t.Parallel()
	bin := fakeBraid(t, `echo "export BRAID_KAFKA_BROKERS=127.0.0.1:19092"
echo "  export BRAID_REDIS_URL=redis://127.0.0.1:16379/0"
exec sleep 60`)
	dir := t.TempDir()
	in, err := StartInfra(InfraConfig{Braid: bin, Dir: dir, KafkaAddr: "127.0.0.1:1", Timeout: testBound})
	require.NoError(t, err)
	t.Cleanup(in.Proc().Kill)
	require.Equal(t, "127.0.0.1:19092", in.Kafka)
	require.Equal(t, "redis://127.0.0.1:16379/0", in.RedisURL)
	log := in.Proc().Log()
	require.Contains(t, log, "args: dev --only infra --data-dir "+filepath.Join(dir, "data")+" --kafka-addr 127.0.0.1:1 --redis-addr 127.0.0.1:")
	require.Error(t, in.Stop(), "sleep ends by SIGTERM, not exit 0")
	require.True(t, in.Proc().Exited())
}

func TestStartInfraEarlyExit(t *testing.T) {
	t.Parallel()
	_, err := StartInfra(InfraConfig{Braid: fakeBraid(t, "echo no redis-server >&2; exit 2"), Dir: t.TempDir(), Timeout: testBound})
	require.ErrorContains(t, err, "infra pid=")
	require.ErrorContains(t, err, "exited early (code 2)")
	require.ErrorContains(t, err, "no redis-server", "the error shows the log's end")
}

func TestStartInfraTimeout(t *testing.T) {
	t.Parallel()
	_, err := StartInfra(InfraConfig{Braid: fakeBraid(t, "echo export BRAID_KAFKA_BROKERS=x; exec sleep 60"),
		Dir: t.TempDir(), Timeout: 200 * time.Millisecond})
	require.ErrorContains(t, err, "condition not met within 200ms")
}

func TestExports(t *testing.T) {
	t.Parallel()
	got := Exports("noise\nexport A=1\n  export B=x=y\nexport C\nexported D=2\n")
	require.Equal(t, map[string]string{"A": "1", "B": "x=y"}, got)
}

func TestPoll(t *testing.T) {
	t.Parallel()
	calls := 0
	require.NoError(t, Poll(testBound, time.Millisecond, func() (bool, error) { calls++; return calls == 3, nil }))
	require.Equal(t, 3, calls)
	require.ErrorIs(t, Poll(testBound, time.Millisecond, func() (bool, error) { return false, os.ErrClosed }), os.ErrClosed)
	require.ErrorContains(t, Poll(20*time.Millisecond, time.Millisecond, func() (bool, error) { return false, nil }), "not met within 20ms")
}

func TestFreeAddr(t *testing.T) {
	t.Parallel()
	a, err := FreeAddr()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(a, "127.0.0.1:"), a)
}

func TestRepoRootAndBuildErrors(t *testing.T) {
	t.Parallel()
	root, err := RepoRoot(".")
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "go.work"))
	_, err = RepoRoot("/")
	require.ErrorContains(t, err, "no go.work above /")

	// A root without the workspace fails with the compiler's output.
	_, err = Build(t.Context(), t.TempDir(), t.TempDir())
	require.ErrorContains(t, err, "build service binaries in")
}
