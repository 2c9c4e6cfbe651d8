package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDevEgress: braid dev's http nodes reach a service on loopback but
// never the stack's own api port, and say so; with --allow-loopback=false
// loopback is refused as braid-worker refuses it.
func TestDevEgress(t *testing.T) {
	t.Parallel()
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok": true}`)
	}))
	t.Cleanup(local.Close)
	tests := []struct {
		name, banner, localState, localErr string
		extra                              []string
	}{
		{name: "default", banner: "may call public addresses and loopback (not this stack's own ports)", localState: "succeeded"},
		{name: "strict", banner: "may call public addresses only", localState: "failed",
			localErr: "is loopback (allow it with BRAID_HTTP_ALLOW)", extra: []string{"--allow-loopback=false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addrs := freeDevAddrs(t)
			d := startDev(t, t.TempDir(), filepath.Join(t.TempDir(), ".braid"), addrs, tt.extra...)
			require.Contains(t, d.log(), tt.banner)
			c := d.stack.client(t)
			name, _ := c.register(egressWorkflow(t, local.URL+"/status", "http://"+addrs.api+"/workflows"))
			r := c.waitDone(c.start(name, `{}`), runTimeout)
			require.Equal(t, "failed", r.Status, "the own-port node fails the run")
			own := r.node(t, "own")
			require.Equal(t, "failed", own.State)
			require.Contains(t, own.Error, "egress refused: "+addrs.api+" is Braid's own api listener")
			require.Equal(t, 1, own.Attempt, "a refusal is permanent: no retry")
			require.Equal(t, tt.localState, r.node(t, "local").State, r.node(t, "local").Error)
			require.Contains(t, r.node(t, "local").Error, tt.localErr)
		})
	}
}

// egressWorkflow has two independent http nodes, each with retries that a
// refusal must not use.
func egressWorkflow(t *testing.T, localURL, ownURL string) []byte {
	t.Helper()
	node := func(id, url string) map[string]any {
		return map[string]any{"id": id, "handler": "http", "config": map[string]any{"url": url}, "retry": map[string]any{"max_attempts": 3}}
	}
	b, err := json.Marshal(map[string]any{"name": "egress_" + randomHex(t, 3), "nodes": []any{node("local", localURL), node("own", ownURL)}})
	require.NoError(t, err)
	return b
}
