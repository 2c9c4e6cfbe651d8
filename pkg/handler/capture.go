package handler

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// truncMarker is appended where captured output was cut.
func truncMarker(dropped int64) string {
	return fmt.Sprintf("…[truncated %d bytes]", dropped)
}

// cappedBuffer keeps the first max bytes written to it and counts the rest.
// It is not safe for concurrent use.
type cappedBuffer struct {
	max     int
	buf     []byte
	dropped int64
}

// Write implements io.Writer; it never fails.
func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := b.max - len(b.buf)
	if room >= len(p) {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	if room > 0 {
		b.buf = append(b.buf, p[:room]...)
	}
	b.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

// Truncated reports whether bytes were dropped.
func (b *cappedBuffer) Truncated() bool { return b.dropped > 0 }

// Bytes returns the kept bytes (not a copy).
func (b *cappedBuffer) Bytes() []byte { return b.buf }

// String returns the kept text, with the truncation marker when bytes were dropped.
func (b *cappedBuffer) String() string {
	return capText(b.buf, b.dropped)
}

// capText renders kept bytes plus a marker for dropped ones; a rune cut in
// half at the end of kept is dropped as well.
func capText(kept []byte, dropped int64) string {
	if dropped == 0 {
		return string(kept)
	}
	cut := validPrefix(kept)
	return string(kept[:cut]) + truncMarker(dropped+int64(len(kept)-cut))
}

// validPrefix returns the length of b without a trailing incomplete rune.
func validPrefix(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// maxDiscard bounds how much of an over-long body is read just to count it.
const maxDiscard = 64 << 20

// readCapped keeps at most limit bytes of r and counts what it dropped; it
// stops reading maxDiscard bytes past the limit (the count is then a minimum).
func readCapped(r io.Reader, limit int) (kept []byte, dropped int64, err error) {
	buf := &cappedBuffer{max: limit}
	n, err := io.Copy(buf, io.LimitReader(r, int64(limit)+maxDiscard))
	if err != nil {
		return nil, 0, err
	}
	return buf.buf, n - int64(len(buf.buf)), nil
}
