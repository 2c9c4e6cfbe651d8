package testinfra

import (
	"context"
	"log/slog"
	"sync"
)

// WatchLog returns a logger that discards every record and a channel that
// closes the first time a record with message msg is logged: a test waits
// on it ("orchestrator started") instead of sleeping.
func WatchLog(msg string) (*slog.Logger, <-chan struct{}) {
	h := watchHandler{msg: msg, once: &sync.Once{}, seen: make(chan struct{})}
	return slog.New(h), h.seen
}

type watchHandler struct {
	msg  string
	once *sync.Once
	seen chan struct{}
}

func (h watchHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h watchHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.seen) })
	}
	return nil
}

func (h watchHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h watchHandler) WithGroup(string) slog.Handler      { return h }
