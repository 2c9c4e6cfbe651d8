package apisvc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/gin-gonic/gin"
)

// limitBody caps the request body at MaxBodyBytes.
func (s *Server) limitBody(c *gin.Context) {
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.MaxBodyBytes)
	}
}

// readJSONBody checks the Content-Type and reads the body; a body over the
// limit is a 413, one still arriving at the server's ReadTimeout a 408. JSON
// types, none, text/plain and curl -d's default
// (application/x-www-form-urlencoded) are read as JSON; others are a 415.
func readJSONBody(c *gin.Context) ([]byte, error) {
	if ct := c.GetHeader("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !jsonish(mt) {
			return nil, errUnsupportedMedia(ct)
		}
	}
	if c.Request.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(c.Request.Body)
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		return nil, errTooLarge(mbe.Limit)
	case errors.As(err, &ne) && ne.Timeout():
		return nil, errRequestTimeout("the request body did not arrive before the server's read timeout (%d bytes came)", len(b))
	case err != nil:
		return nil, errBadRequest("cannot read the request body: %v", err)
	}
	return b, nil
}

// jsonish reports whether a body of media type mt is read as JSON.
func jsonish(mt string) bool {
	switch mt {
	case "application/json", "text/plain", "application/x-www-form-urlencoded":
		return true
	}
	return strings.HasSuffix(mt, "+json")
}

// decodeStrict decodes one JSON object into v, rejecting unknown fields,
// wrong types and trailing data with a 400 that says where.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errBadRequest("invalid JSON body: %s", jsonProblem(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errBadRequest("invalid JSON body: unexpected data after the JSON value")
	}
	return nil
}

// jsonProblem describes a decoding error with its position or field.
func jsonProblem(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := lineCol(data, se.Offset)
		return fmt.Sprintf("%v at line %d, column %d", se, line, col)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "the body"
		}
		return fmt.Sprintf("%s must be %s, got %s", field, jsonKind(te.Type.Kind().String()), te.Value)
	case errors.Is(err, io.EOF):
		return "the body is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends in the middle of a JSON value"
	}
	return err.Error()
}

// jsonKind names a Go kind in JSON terms.
func jsonKind(kind string) string {
	switch kind {
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// jsonEncode writes v as JSON without HTML escaping.
func jsonEncode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// respond writes v as JSON with status.
func respond(c *gin.Context, status int, v any) {
	jsonHeader(c, status)
	_ = jsonEncode(c.Writer, v)
}

// jsonHeader sets the Content-Type and status of a JSON answer.
func jsonHeader(c *gin.Context, status int) {
	c.Header("Content-Type", "application/json; charset=utf-8")
	c.Status(status)
}

// runDocs recycles the buffers respondWithRun encodes runs into, as
// encoding/json recycles its own: a large run's document is megabytes.
var runDocs = sync.Pool{New: func() any { return new([]byte) }}

// respondWithRun answers 200 with run, the same bytes respond writes,
// through apiwire's hand-written encoder: GET /runs/{id} and ?wait= answer
// whole runs, of up to thousands of nodes, and encoding/json spent most of
// such an answer's time in reflection. Input that is not JSON (which
// loadedRun.input rules out) takes respond's path, as it did before.
func respondWithRun(c *gin.Context, run *apiwire.Run) {
	buf := runDocs.Get().(*[]byte)
	defer runDocs.Put(buf)
	doc, err := run.AppendJSON((*buf)[:0])
	if err != nil {
		respond(c, http.StatusOK, run)
		return
	}
	*buf = append(doc, '\n')
	jsonHeader(c, http.StatusOK)
	_, _ = c.Writer.Write(*buf)
}
