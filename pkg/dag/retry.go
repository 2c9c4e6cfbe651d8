package dag

import (
	"math"
	"time"
)

// Backoff kinds for RetryPolicy.Backoff.
const (
	BackoffFixed       = "fixed"
	BackoffExponential = "exponential"
)

// Retry defaults applied by RetryPolicy.Delay when a field is zero.
const (
	DefaultInitialInterval = time.Second
	DefaultMaxInterval     = 5 * time.Minute
	DefaultMultiplier      = 2.0
	MaxRetryAttempts       = 100 // the largest valid MaxAttempts
)

// RetryPolicy says how often and how fast a failed node is retried.
type RetryPolicy struct {
	MaxAttempts     int      `json:"max_attempts,omitempty"`     // total attempts, 1..100
	Backoff         string   `json:"backoff,omitempty"`          // fixed (default) or exponential
	InitialInterval Duration `json:"initial_interval,omitempty"` // first delay; default 1s
	MaxInterval     Duration `json:"max_interval,omitempty"`     // delay cap; default 5m (or InitialInterval if larger)
	Multiplier      float64  `json:"multiplier,omitempty"`       // exponential growth factor; default 2
	Jitter          float64  `json:"jitter,omitempty"`           // 0..1: the delay varies by ±Jitter×delay
}

// Attempts returns the total number of attempts p allows: MaxAttempts, or 1 for a nil policy
// or a zero MaxAttempts.
func (p *RetryPolicy) Attempts() int {
	if p == nil || p.MaxAttempts < 1 {
		return 1
	}
	return p.MaxAttempts
}

// Delay returns the wait before attempt+1 after attempt (1-based) failed. rnd in [0,1) supplies
// the jitter so callers decide the randomness (and tests stay deterministic): the delay is
// scaled by 1 + Jitter×(2×rnd−1) and then capped at the max interval. A nil policy returns 0.
func (p *RetryPolicy) Delay(attempt int, rnd float64) time.Duration {
	if p == nil {
		return 0
	}
	initial := float64(p.InitialInterval)
	if initial <= 0 {
		initial = float64(DefaultInitialInterval)
	}
	maxI := float64(p.MaxInterval)
	if maxI <= 0 {
		maxI = math.Max(float64(DefaultMaxInterval), initial)
	}
	d := initial
	if p.Backoff == BackoffExponential {
		mult := p.Multiplier
		if mult <= 0 {
			mult = DefaultMultiplier
		}
		d = initial * math.Pow(mult, float64(max(attempt, 1)-1))
	}
	jitter := math.Min(math.Max(p.Jitter, 0), 1)
	rnd = math.Min(math.Max(rnd, 0), 1)
	d *= 1 + jitter*(2*rnd-1)
	if math.IsNaN(d) || d > maxI {
		d = maxI
	}
	return time.Duration(d)
}
