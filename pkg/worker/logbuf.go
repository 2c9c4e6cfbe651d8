package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
)

// logBuffer holds an attempt's log lines not yet appended to Redis.
type logBuffer struct {
	// key is the Redis list of the attempt's lines: statestore.Keys.Logs
	// of id, made when the first lines are flushed (most attempts log
	// nothing, and the key would be a string built for each).
	keys  statestore.Keys
	id    statestore.Attempt
	limit int // most lines kept

	mu      sync.Mutex
	pending [][]byte // encoded LogLines, at most limit
	mask    *masker  // secrets to hide in every line

	flushMu sync.Mutex // keeps concurrent flushes in order
}

func newLogBuffer(keys statestore.Keys, id statestore.Attempt, limit int) *logBuffer {
	return &logBuffer{keys: keys, id: id, limit: limit}
}

// key is the attempt's log list.
func (b *logBuffer) key() string {
	return b.keys.Logs(b.id.Run, b.id.Node, b.id.Instance, b.id.Attempt)
}

// add records one line; when more than limit lines wait, the oldest is dropped
// (LTRIM would drop it anyway).
func (b *logBuffer) add(stream, text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Masked before the cut, so a cut cannot leave part of a value behind.
	enc, err := json.Marshal(records.LogLine{TimeMs: time.Now().UnixMilli(), Stream: stream, Text: cutLine(b.mask.str(text))})
	if err != nil { // plain strings: cannot fail
		return
	}
	if len(b.pending) >= b.limit {
		b.pending = b.pending[1:]
	}
	b.pending = append(b.pending, enc)
}

// setMask makes every later line hide m's secrets.
func (b *logBuffer) setMask(m *masker) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mask = m
}

func (b *logBuffer) take() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.pending
	b.pending = nil
	return p
}

// flush appends the pending lines to the Redis list and trims it to limit, in
// one pipelined round trip. Lines that fail to be written are lost (logs are
// best effort); the error says how many.
//
// bound makes the context of the round trip from ctx; it is called only when
// there is something to write, so an attempt that logged nothing (most of
// them) costs no context and no timer here.
func (b *logBuffer) flush(ctx context.Context, rdb redis.Cmdable, bound func(context.Context) (context.Context, context.CancelFunc)) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	lines := b.take()
	if len(lines) == 0 {
		return nil
	}
	ctx, cancel := bound(ctx)
	defer cancel()
	args := make([]any, len(lines))
	for i, l := range lines {
		args[i] = l
	}
	key := b.key()
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, key, args...)
		p.LTrim(ctx, key, int64(-b.limit), -1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("append %d log lines to %s: %w", len(lines), key, err)
	}
	return nil
}

// cutLine shortens s to at most MaxLogLineBytes without splitting a rune.
func cutLine(s string) string {
	if len(s) <= MaxLogLineBytes {
		return s
	}
	n := MaxLogLineBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
