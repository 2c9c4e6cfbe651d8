package worker

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"testing/slogtest"

	"github.com/stretchr/testify/require"
)

// The lazy handler logs what slog.Logger.With would have: the attributes
// before the record's, in the order given, and obeys the parent's level.
func TestLazyAttrsLogsAsWith(t *testing.T) {
	var eager, lazy bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	attrs := []slog.Attr{slog.String("run_id", "r1"), slog.Int("attempt", 2)}
	el := slog.New(slog.NewTextHandler(&eager, opts)).With("run_id", "r1", "attempt", 2)
	ll := slog.New(&lazyAttrs{parent: slog.NewTextHandler(&lazy, opts), attrs: attrs})
	for _, l := range []*slog.Logger{el, ll} {
		l.Debug("hidden", "k", 1)
		l.Info("shown", "k", 1)
		l.WithGroup("g").With("x", "y").Warn("grouped", "k", 2)
	}
	require.Equal(t, eager.String(), lazy.String())
	require.Contains(t, lazy.String(), `level=INFO msg=shown run_id=r1 attempt=2 k=1`)
	require.NotContains(t, lazy.String(), "hidden")
}

// It keeps slog's handler contract.
func TestLazyAttrsHandlerContract(t *testing.T) {
	var buf bytes.Buffer
	slogtest.Run(t, func(*testing.T) slog.Handler {
		buf.Reset()
		return &lazyAttrs{parent: slog.NewJSONHandler(&buf, nil)}
	}, func(t *testing.T) map[string]any {
		var m map[string]any
		require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
		return m
	})
}
