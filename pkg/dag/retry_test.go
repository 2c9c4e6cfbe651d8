package dag

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	sec := func(n float64) Duration { return Duration(n * float64(time.Second)) }
	tests := []struct {
		name    string
		policy  *RetryPolicy
		attempt int
		rnd     float64
		want    time.Duration
	}{
		{"nil policy", nil, 1, 0.5, 0},
		{"defaults are fixed 1s", &RetryPolicy{MaxAttempts: 3}, 2, 0.5, time.Second},
		{"fixed", &RetryPolicy{InitialInterval: sec(3)}, 5, 0.5, 3 * time.Second},
		{"fixed above the default cap", &RetryPolicy{InitialInterval: Duration(10 * time.Minute)}, 1, 0.5, 10 * time.Minute},
		{"exponential first", &RetryPolicy{Backoff: BackoffExponential}, 1, 0.5, time.Second},
		{"exponential third", &RetryPolicy{Backoff: BackoffExponential}, 3, 0.5, 4 * time.Second},
		{"exponential multiplier", &RetryPolicy{Backoff: BackoffExponential, Multiplier: 3, InitialInterval: sec(2)}, 3, 0.5, 18 * time.Second},
		{"exponential capped", &RetryPolicy{Backoff: BackoffExponential, MaxInterval: sec(30)}, 10, 0.5, 30 * time.Second},
		{"exponential default cap", &RetryPolicy{Backoff: BackoffExponential}, 100, 0.5, 5 * time.Minute},
		{"attempt below one", &RetryPolicy{Backoff: BackoffExponential}, 0, 0.5, time.Second},
		{"jitter low", &RetryPolicy{InitialInterval: sec(10), Jitter: 0.5}, 1, 0, 5 * time.Second},
		{"jitter high", &RetryPolicy{InitialInterval: sec(10), Jitter: 0.5}, 1, 0.75, 12500 * time.Millisecond},
		{"jitter capped at max", &RetryPolicy{InitialInterval: sec(10), MaxInterval: sec(11), Jitter: 1}, 1, 0.99, 11 * time.Second},
		{"rnd clamped", &RetryPolicy{InitialInterval: sec(10), Jitter: 1}, 1, -5, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.policy.Delay(tc.attempt, tc.rnd))
		})
	}
}

func TestRetryAttempts(t *testing.T) {
	t.Parallel()
	var none *RetryPolicy
	require.Equal(t, 1, none.Attempts())
	require.Equal(t, 1, (&RetryPolicy{}).Attempts())
	require.Equal(t, 4, (&RetryPolicy{MaxAttempts: 4}).Attempts())
}
