package apisvc

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
)

// sseStream writes server-sent events to one client.
type sseStream struct {
	w   gin.ResponseWriter
	buf bytes.Buffer
}

// startSSE sends the event-stream headers and returns the stream.
func startSSE(c *gin.Context) *sseStream {
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	c.Status(http.StatusOK)
	c.Writer.WriteHeaderNow()
	c.Writer.Flush()
	return &sseStream{w: c.Writer}
}

// send writes one event whose data is v as single-line JSON; an error means
// the client is gone.
func (s *sseStream) send(event, id string, v any) error {
	s.buf.Reset()
	if id != "" {
		fmt.Fprintf(&s.buf, "id: %s\n", id)
	}
	fmt.Fprintf(&s.buf, "event: %s\ndata: ", event)
	if err := jsonEncode(&s.buf, v); err != nil { // ends with the data line's "\n"
		return err
	}
	s.buf.WriteString("\n")
	return s.flush()
}

// comment writes an SSE comment line (keep-alive).
func (s *sseStream) comment(text string) error {
	s.buf.Reset()
	s.buf.WriteString(": " + text + "\n\n")
	return s.flush()
}

func (s *sseStream) flush() error {
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return err
	}
	s.w.Flush()
	return nil
}
