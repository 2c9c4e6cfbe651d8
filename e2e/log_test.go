package e2e

import (
	"io"
	"log/slog"
	"os"
	"testing"
)

// testLogger logs to stderr when BRAID_TEST_LOG is set, else nowhere.
func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("BRAID_TEST_LOG") == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test", t.Name())
}
