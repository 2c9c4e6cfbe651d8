package client

import (
	"bufio"
	"bytes"
	"io"
	"strings"
)

// maxSSELine bounds one line of an event stream.
const maxSSELine = 1 << 20

// Event is one server-sent event.
type Event struct {
	// ID is the event's id field (for Last-Event-ID), if any.
	ID string
	// Type is the event field; "message" when absent.
	Type string
	// Data is the data lines joined with "\n".
	Data string
}

// readEvents parses a text/event-stream from r and calls fn for each
// complete event, stopping at the first error fn returns, a read error or
// the end of r (an unterminated last event is dropped, as the standard
// says). Comment lines (":...") are ignored.
func readEvents(r io.Reader, fn func(Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxSSELine)
	var ev Event
	var data bytes.Buffer
	hasData := false
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if hasData {
				ev.Data = data.String()
				if ev.Type == "" {
					ev.Type = "message"
				}
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, hasData = Event{ID: ev.ID}, false
			data.Reset()
			continue
		}
		field, value := splitField(line)
		switch field {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
		case "event":
			ev.Type = value
		case "id":
			ev.ID = value
		}
	}
	return sc.Err()
}

// splitField splits "field: value" (one optional space after the colon).
func splitField(line string) (string, string) {
	field, value, found := strings.Cut(line, ":")
	if !found {
		return line, ""
	}
	return field, strings.TrimPrefix(value, " ")
}
