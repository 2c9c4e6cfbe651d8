package apisvc

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// sseStream writes server-sent events to one client.
type sseStream struct {
	w   gin.ResponseWriter
	rc  *http.ResponseController
	buf bytes.Buffer
	// grace is how long each write may take: a client that stops reading
	// blocks a write once the socket buffers are full, and the deadline
	// ends its stream instead of holding the goroutine forever.
	grace time.Duration
}

// startSSE sends the event-stream headers and returns the stream. The
// stream outlives the server's WriteTimeout: every write gets one of its
// own (see deadlines.go).
func (s *Server) startSSE(c *gin.Context) *sseStream {
	st := &sseStream{w: c.Writer, rc: http.NewResponseController(c.Writer), grace: s.cfg.WriteTimeout}
	st.extend()
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	c.Status(http.StatusOK)
	c.Writer.WriteHeaderNow()
	c.Writer.Flush()
	return st
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

// extend gives the next write grace from now (best effort, see deadlines.go).
func (s *sseStream) extend() { _ = s.rc.SetWriteDeadline(time.Now().Add(s.grace)) }

func (s *sseStream) flush() error {
	s.extend()
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return err
	}
	s.w.Flush()
	return nil
}
