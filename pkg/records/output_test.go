package records

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStoresOutput(t *testing.T) {
	t.Parallel()
	require.False(t, StoresOutput([]byte("null")))
	for _, out := range []string{`{}`, `[]`, `0`, `""`, `[null]`, ` null`, `false`} {
		require.True(t, StoresOutput([]byte(out)), out)
	}
}

func TestOutputOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		st     NodeState
		stored string
		found  bool
		want   json.RawMessage
	}{
		{NodeSucceeded, `{"n":1}`, true, json.RawMessage(`{"n":1}`)},
		{NodeSucceeded, "", false, json.RawMessage("null")},
		{NodeFailed, "", false, nil},
		{NodeRunning, "", false, nil},
		{NodeSkipped, "", false, nil},
		{NodePending, `[1]`, true, json.RawMessage(`[1]`)},
	}
	for _, c := range cases {
		require.Equal(t, c.want, OutputOf(c.st, c.stored, c.found), "%s %q %v", c.st, c.stored, c.found)
	}
}
