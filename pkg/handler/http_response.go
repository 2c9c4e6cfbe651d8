package handler

import (
	"mime"
	"net/http"
	"strings"
)

// httpOutput is the http handler's output.
type httpOutput struct {
	Status int `json:"status"`
	// Headers holds the first value of each response header, names lower-cased.
	Headers map[string]string `json:"headers"`
	// Body is the parsed JSON when the response is JSON, else the text (capped).
	Body any `json:"body"`
}

// maxSnippet caps, in bytes, the response text quoted in an error.
const maxSnippet = 256

// snippet returns the start of a text body for error messages.
func (o *httpOutput) snippet() string {
	s, ok := o.Body.(string)
	if !ok {
		return ""
	}
	return truncRunes(strings.TrimSpace(s), maxSnippet)
}

// readHTTPResponse reads at most limit bytes of the body and builds the output.
func readHTTPResponse(resp *http.Response, limit int) (*httpOutput, error) {
	kept, dropped, err := readCapped(resp.Body, limit)
	if err != nil {
		return nil, err
	}
	out := &httpOutput{Status: resp.StatusCode, Headers: firstHeaders(resp.Header)}
	out.Body = capText(kept, dropped)
	if dropped == 0 && isJSONContentType(resp.Header.Get("Content-Type")) {
		if v, err := decodeAny(kept); err == nil && len(kept) > 0 {
			out.Body = v
		}
	}
	return out, nil
}

// firstHeaders maps each lower-cased header name to its first value.
func firstHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		if len(vs) > 0 {
			out[strings.ToLower(k)] = vs[0]
		}
	}
	return out
}

// isJSONContentType accepts application/json and any +json media type.
func isJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
