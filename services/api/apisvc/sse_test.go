package apisvc_test

import (
	"bufio"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sseEvent is one parsed server-sent event (or comment).
type sseEvent struct {
	id, event, data string
	comment         string
}

// sseReader parses an event stream in a goroutine.
type sseReader struct {
	ch chan sseEvent
}

func newSSEReader(r io.Reader) *sseReader {
	s := &sseReader{ch: make(chan sseEvent, 1024)}
	go func() {
		defer close(s.ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev != (sseEvent{}) {
					s.ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				ev.comment = strings.TrimSpace(line[1:])
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	return s
}

// next returns the next event that is not a comment, within in all
// (keep-alive comments do not extend it).
func (s *sseReader) next(t *testing.T, within time.Duration) sseEvent {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("no event but keep-alives within %s", within)
		}
		ev := s.nextAny(t, left)
		if ev.comment == "" {
			return ev
		}
	}
}

// nextAny returns the next event or comment.
func (s *sseReader) nextAny(t *testing.T, within time.Duration) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.ch:
		require.True(t, ok, "the stream ended")
		return ev
	case <-time.After(within):
		t.Fatalf("no event within %s", within)
		return sseEvent{}
	}
}

func touch(path string) error { return os.WriteFile(path, nil, 0o600) }
