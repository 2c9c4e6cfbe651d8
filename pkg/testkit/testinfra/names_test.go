package testinfra

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUniqueNameIsValidAndUnique(t *testing.T) {
	t.Parallel()
	valid := regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`) // Kafka topic rule
	seen := map[string]bool{}
	for range 100 {
		n := UniqueName(t, "topic")
		require.Regexp(t, valid, n)
		require.False(t, seen[n], "duplicate %s", n)
		seen[n] = true
	}
	t.Run("Sub/Test With Spaces", func(t *testing.T) {
		require.Regexp(t, `^p-testuniquenameisvalidandunique-sub-test-`, UniqueName(t, "p"))
	})
}

// TestFreePortNeverRepeats: within a process FreePort never hands out a port
// twice, even though the kernel may return a just-closed port to the next
// bind(0). (Whether the port is still free when bound cannot be tested: any
// other process may take it first, which is why StartRedis retries.)
func TestFreePortNeverRepeats(t *testing.T) {
	t.Parallel()
	seen := map[int]bool{}
	for range 50 {
		p := FreePort(t)
		require.Greater(t, p, 0)
		require.Less(t, p, 65536)
		require.False(t, seen[p], "port %d handed out twice", p)
		seen[p] = true
	}
}
