package worker

import (
	"context"
	"log/slog"
	"sync"
)

// lazyAttrs is a slog.Handler that adds attrs to parent when it first
// handles a record (or is derived from), not when it is made, so a logger
// that never logs costs no formatting. Records, levels and groups are
// parent's.
type lazyAttrs struct {
	parent slog.Handler
	attrs  []slog.Attr

	once sync.Once
	h    slog.Handler // parent.WithAttrs(attrs), made once
}

func (l *lazyAttrs) handler() slog.Handler {
	l.once.Do(func() { l.h = l.parent.WithAttrs(l.attrs) })
	return l.h
}

// Enabled asks parent: the attributes do not change the level.
func (l *lazyAttrs) Enabled(ctx context.Context, level slog.Level) bool {
	return l.parent.Enabled(ctx, level)
}

// Handle hands r to parent with the attributes added.
func (l *lazyAttrs) Handle(ctx context.Context, r slog.Record) error {
	return l.handler().Handle(ctx, r)
}

// WithAttrs derives from the handler with the attributes added.
func (l *lazyAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return l.handler().WithAttrs(attrs)
}

// WithGroup derives from the handler with the attributes added.
func (l *lazyAttrs) WithGroup(name string) slog.Handler {
	return l.handler().WithGroup(name)
}
