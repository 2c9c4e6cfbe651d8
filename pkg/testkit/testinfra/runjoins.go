package testinfra

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// RequireRunJoins checks a service's Run: it runs run until run logs
// started, ends its context, and requires that run returns nil within a
// minute having joined every goroutine it started (goleak finds none that
// was not there before). Not for parallel tests: goleak looks at every
// goroutine of the process. Start the test's infrastructure (and dial its
// clients) before calling it, so that their goroutines count as before.
func RequireRunJoins(t testing.TB, started string, run func(context.Context, *slog.Logger) error) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	logger, seen := WatchLog(started)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, logger) }()
	select {
	case <-seen:
	case err := <-done:
		t.Fatalf("run returned before logging %q: %v", started, err)
	case <-time.After(time.Minute):
		t.Fatalf("run did not log %q within a minute", started)
	}
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("run did not return within a minute of its context ending")
	}
	goleak.VerifyNone(t, before)
}
