package apisvc

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// Per-request connection deadlines. The http.Server's ReadTimeout and
// WriteTimeout (see Serve) protect every request from slow clients; they
// count from when the request began, so requests that stay open on purpose
// (an SSE stream, a ?wait=) must move the write deadline:
//
//   - A ?wait= moves its write deadline past the wait (writeBy).
//   - An SSE stream gives each event a WriteTimeout of its own (sse.go);
//     a client that stops reading is cut off by that deadline.
//
// ReadTimeout needs no such care: net/http lifts the read deadline itself
// once a request is read to its end (when it starts reading the idle
// connection in the background to notice a client that leaves), so it
// bounds only how long a request takes to arrive (the tests of streams and
// waits outliving short server timeouts hold net/http to that).
//
// Deadlines are best effort: a ResponseWriter that does not support them (a
// test recorder) has no server timeouts to move either.

// writeBy moves the write deadline of c's response to t.
func writeBy(c *gin.Context, t time.Time) {
	_ = http.NewResponseController(c.Writer).SetWriteDeadline(t)
}
