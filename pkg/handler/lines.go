package handler

import (
	"bytes"
	"strings"

	"github.com/braidhq/braid/pkg/worker"
)

// maxLogLine caps, in bytes, one line sent to Task.Log.
const maxLogLine = 4 << 10

// lineWriter splits a byte stream into lines, sends each line to a log
// stream as it completes, and captures the whole stream in a cappedBuffer.
// One goroutine writes to it; Flush must be called after the last Write.
type lineWriter struct {
	stream  string
	log     worker.LogFunc
	out     cappedBuffer
	line    []byte
	dropped int
	last    string // last non-blank line
}

func newLineWriter(stream string, log worker.LogFunc, maxOutput int) *lineWriter {
	return &lineWriter{stream: stream, log: log, out: cappedBuffer{max: maxOutput}}
}

// Write implements io.Writer; it never fails.
func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	_, _ = w.out.Write(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		w.emit()
		p = p[i+1:]
	}
	return n, nil
}

// add appends to the current line, keeping at most maxLogLine bytes.
func (w *lineWriter) add(b []byte) {
	room := max(maxLogLine-len(w.line), 0)
	if len(b) > room {
		w.dropped += len(b) - room
		b = b[:room]
	}
	w.line = append(w.line, b...)
}

// emit logs the current line and starts a new one.
func (w *lineWriter) emit() {
	line := capText(bytes.TrimSuffix(w.line, []byte("\r")), int64(w.dropped))
	w.log(w.stream, line)
	if strings.TrimSpace(line) != "" {
		w.last = line
	}
	w.line, w.dropped = w.line[:0], 0
}

// Flush logs a final line that had no trailing newline.
func (w *lineWriter) Flush() {
	if len(w.line) > 0 || w.dropped > 0 {
		w.emit()
	}
}
