package handler

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHTTPMock(t *testing.T) {
	t.Parallel()
	// The URL points nowhere reachable: a mock must not touch the network.
	config := `{"mock": true, "method": "post", "url": "http://unreachable.invalid/x", "body": {"a": [1, 2]}, "action": "ignored"}`
	out1, _, err := handle(t, Config{}, NameHTTP, config)
	require.NoError(t, err)
	out2, _, err := handle(t, Config{}, NameHTTP, config)
	require.NoError(t, err)
	want := map[string]any{
		"status":  200.0,
		"headers": map[string]any{},
		"body": map[string]any{
			"mock": true, "method": "POST", "url": "http://unreachable.invalid/x",
			"echo": map[string]any{"a": []any{1.0, 2.0}}, "idempotency_key": "run-1/node-a/0/1",
		},
		"result": "mock response to POST http://unreachable.invalid/x",
	}
	require.Equal(t, want, asMap(t, out1))
	require.Equal(t, asMap(t, out1), asMap(t, out2), "mock output is deterministic")
}

func TestHTTPMockWithoutURL(t *testing.T) {
	t.Parallel()
	out, _, err := handle(t, Config{}, NameHTTP, `{"mock": true, "mock_delay": "1ms"}`)
	require.NoError(t, err)
	m := asMap(t, out)
	require.Equal(t, "mock response to GET", m["result"])
	require.Nil(t, m["body"].(map[string]any)["echo"])
}

func TestHTTPMockDelayHonoursContext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		end     error
		wantErr string
	}{
		{name: "cancel", end: context.Canceled, wantErr: "http mock: cancelled after"},
		{name: "deadline", end: context.DeadlineExceeded, wantErr: "http mock: timed out after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			task, _ := newTask(t, `{"mock": true, "mock_delay": "1h"}`)
			ctx := newManualContext()
			done := make(chan error, 1)
			go func() {
				_, err := Builtins(Config{})[NameHTTP].Handle(ctx, task)
				done <- err
			}()
			ctx.end(tt.end)
			select {
			case err := <-done:
				requireRetryable(t, err, tt.wantErr)
				require.ErrorIs(t, err, tt.end)
			case <-time.After(5 * time.Second):
				t.Fatal("mock did not return after the context ended")
			}
		})
	}
}
