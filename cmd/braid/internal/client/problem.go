package client

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/braidhq/braid/pkg/apiwire"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// FieldError is one {path, message} item of a problem's errors list.
type FieldError = apiwire.FieldError

// Problem is an RFC 9457 problem+json error returned by the API, or a
// synthesised one for non-problem error responses. It embeds the api's
// document to add the error interface the CLI reports it through.
type Problem struct{ apiwire.Problem }

// Error returns the detail (or title) and the HTTP status.
func (p *Problem) Error() string {
	msg := p.Detail
	if msg == "" {
		msg = p.Title
	}
	if msg == "" {
		msg = http.StatusText(p.Status)
	}
	return fmt.Sprintf("%s (HTTP %d)", msg, p.Status)
}

// decodeProblem turns an error response into a *Problem. A body that is not
// problem JSON becomes the detail, trimmed.
func decodeProblem(resp *http.Response) *Problem {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	p := &Problem{}
	if err := json.Unmarshal(body, &p.Problem); err != nil || (p.Title == "" && p.Detail == "") {
		p = &Problem{apiwire.Problem{Detail: strings.TrimSpace(string(body))}}
	}
	if p.Status == 0 {
		p.Status = resp.StatusCode
	}
	if p.Title == "" {
		p.Title = http.StatusText(resp.StatusCode)
	}
	return p
}
