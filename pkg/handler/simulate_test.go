package handler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSimulateOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config string
		want   any
	}{
		{name: "default", config: `{"action": "validate_order", "duration_seconds": 0, "fail_probability": 0.0, "max_retries": 0}`,
			want: map[string]any{"action": "validate_order", "ok": true, "attempt": 1.0, "duration_ms": 0.0}},
		{name: "no action", config: `{"duration": "1ms"}`,
			want: map[string]any{"ok": true, "attempt": 1.0, "duration_ms": 1.0}},
		{name: "null config", config: `null`,
			want: map[string]any{"ok": true, "attempt": 1.0, "duration_ms": 0.0}},
		{name: "given output", config: `{"duration": 0.001, "output": {"rows": [1, 2]}}`,
			want: map[string]any{"rows": []any{1.0, 2.0}}},
		{name: "scalar output", config: `{"output": "done"}`, want: "done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, _, err := handle(t, Config{}, NameSimulate, tt.config)
			require.NoError(t, err)
			require.Equal(t, tt.want, asJSON(t, out))
		})
	}
}

func TestSimulateBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, config, want string }{
		{name: "p above 1", config: `{"fail_probability": 1.5}`, want: `"fail_probability": want 0..1`},
		{name: "p negative", config: `{"fail_probability": -0.1}`, want: `"fail_probability"`},
		{name: "p type", config: `{"fail_probability": "high"}`, want: `"fail_probability": want number, got string`},
		{name: "duration", config: `{"duration": "forever"}`, want: `config field "duration"`},
		{name: "seed duration", config: `{"duration_seconds": -2}`, want: `config field "duration_seconds"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := handle(t, Config{}, NameSimulate, tt.config)
			requirePermanent(t, err, "simulate: invalid config", tt.want)
		})
	}
}

// simulateOutcome runs simulate with idempotency key key and probability p.
func simulateOutcome(t *testing.T, key string, p float64) error {
	t.Helper()
	task, _ := newTask(t, fmt.Sprintf(`{"fail_probability": %g}`, p))
	task.IdempotencyKey = key
	_, err := Builtins(Config{})[NameSimulate].Handle(t.Context(), task)
	return err
}

func TestSimulateFailureDeterministicPerKey(t *testing.T) {
	t.Parallel()
	failed, succeeded := 0, 0
	for attempt := 1; attempt <= 40; attempt++ {
		key := fmt.Sprintf("run-1/charge/0/%d", attempt)
		first := simulateOutcome(t, key, 0.3)
		for range 3 {
			require.Equal(t, first, simulateOutcome(t, key, 0.3), "same key, same outcome")
		}
		if first != nil {
			requireRetryable(t, first)
			require.Equal(t, "simulated failure (p=0.3)", first.Error())
			failed++
		} else {
			succeeded++
		}
	}
	require.Positive(t, failed, "p=0.3 over 40 keys must fail sometimes")
	require.Positive(t, succeeded, "p=0.3 over 40 keys must succeed sometimes")
}

func TestSimulateExtremeProbabilities(t *testing.T) {
	t.Parallel()
	for attempt := range 50 {
		key := fmt.Sprintf("k/%d", attempt)
		require.NoError(t, simulateOutcome(t, key, 0))
		require.EqualError(t, simulateOutcome(t, key, 1), "simulated failure (p=1)")
	}
}

func TestSimulateHonoursContext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		end  error
		want string
	}{
		{name: "cancel", end: context.Canceled, want: "simulate: cancelled after"},
		{name: "deadline", end: context.DeadlineExceeded, want: "simulate: timed out after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			task, _ := newTask(t, `{"duration": "300s"}`)
			ctx := newManualContext()
			done := make(chan error, 1)
			go func() {
				_, err := Builtins(Config{})[NameSimulate].Handle(ctx, task)
				done <- err
			}()
			ctx.end(tt.end)
			select {
			case err := <-done:
				requireRetryable(t, err, tt.want)
				require.ErrorIs(t, err, tt.end)
			case <-time.After(5 * time.Second):
				t.Fatal("simulate did not return after the context ended")
			}
		})
	}
}
