package client

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTimeDecoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		want    time.Time
		wantErr bool
	}{
		{name: "rfc3339 ms", input: `"2026-01-02T03:04:05.123Z"`, want: time.Date(2026, 1, 2, 3, 4, 5, 123e6, time.UTC)},
		{name: "unix ms", input: `1767323045123`, want: time.UnixMilli(1767323045123)},
		{name: "empty", input: `""`},
		{name: "null", input: `null`},
		{name: "zero ms", input: `0`},
		{name: "garbage text", input: `"yesterday"`, wantErr: true},
		{name: "object", input: `{}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got Time
			err := json.Unmarshal([]byte(tt.input), &got)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.True(t, tt.want.Equal(got.Time), "got %v want %v", got.Time, tt.want)
		})
	}
}

func TestNodesDecoding(t *testing.T) {
	t.Parallel()
	var r Run
	require.NoError(t, json.Unmarshal([]byte(`{"id":"r","nodes":[{"id":"b","state":"running","attempt":2,
		"started_at":"2026-01-01T00:00:00Z","worker":"w1","waiting_reason":""},{"id":"a","state":"pending",
		"waiting_reason":"waiting for parents: b"}]}`), &r))
	require.Equal(t, []string{"b", "a"}, []string{r.Nodes[0].ID, r.Nodes[1].ID}, "array order is kept")
	require.Equal(t, 2, r.Nodes[0].Attempt)
	require.Equal(t, "waiting for parents: b", r.Nodes[1].WaitingReason)

	var m Run
	require.NoError(t, json.Unmarshal([]byte(`{"nodes":{"z":{"state":"failed"},"a":{"state":"succeeded"}}}`), &m))
	require.Equal(t, Nodes{{ID: "a", State: "succeeded"}, {ID: "z", State: "failed"}}, m.Nodes, "object form is sorted by id")
}

func TestNodeDuration(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start.Add(5 * time.Second)
	require.Zero(t, Node{}.Duration(now))
	require.Equal(t, 5*time.Second, Node{StartedAt: Time{start}}.Duration(now))
	require.Equal(t, 2*time.Second, Node{StartedAt: Time{start}, FinishedAt: Time{start.Add(2 * time.Second)}}.Duration(now))
}
