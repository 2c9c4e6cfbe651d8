package apisvc_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/braidhq/braid/services/api/apisvc"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"
)

var (
	docOnce   sync.Once
	docErr    error
	theDoc    *openapi3.T
	docRouter routers.Router
)

// openAPIDoc loads and validates the embedded document once.
func openAPIDoc(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	docOnce.Do(func() {
		openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
		loader := openapi3.NewLoader()
		theDoc, docErr = loader.LoadFromData(apisvc.OpenAPIDocument)
		if docErr == nil {
			docErr = theDoc.Validate(context.Background())
		}
		if docErr == nil {
			docRouter, docErr = gorillamux.NewRouter(theDoc)
		}
	})
	require.NoError(t, docErr)
	return theDoc, docRouter
}

// client sends requests to the api and validates each request and response
// against the OpenAPI document.
type client struct {
	base string
	hc   *http.Client
}

func newClient(t *testing.T, base string) *client {
	openAPIDoc(t)
	return &client{base: base, hc: &http.Client{}}
}

// do sends r. With strict, the request itself must conform to the document
// (malformed-input tests turn that off); the response always must.
func (c *client) do(t *testing.T, r req, strict bool) response {
	t.Helper()
	hr := c.request(t, r)
	input, ok := validateRequest(t, hr, bodyBytes(t, r.body), strict)
	resp, err := c.hc.Do(hr)
	require.NoError(t, err)
	defer resp.Body.Close()
	out := response{Status: resp.StatusCode, Header: resp.Header, Body: readAll(t, resp.Body)}
	if ok {
		validateResponse(t, input, out)
	}
	return out
}

// inFlight is a request sent by send whose answer has not been read yet.
type inFlight struct {
	input   *openapi3filter.RequestValidationInput
	checked bool
	done    chan inFlightAnswer
}

type inFlightAnswer struct {
	resp response
	err  error
}

// send sends r (checked against the OpenAPI document) from another
// goroutine and returns at once; read the answer with run. Nothing in the
// goroutine can fail the test: run checks what it got.
func (c *client) send(t *testing.T, r req) *inFlight {
	t.Helper()
	hr := c.request(t, r)
	input, ok := validateRequest(t, hr, bodyBytes(t, r.body), !r.malformed)
	f := &inFlight{input: input, checked: ok, done: make(chan inFlightAnswer, 1)}
	go func() {
		resp, err := c.hc.Do(hr)
		if err != nil {
			f.done <- inFlightAnswer{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		f.done <- inFlightAnswer{resp: response{Status: resp.StatusCode, Header: resp.Header, Body: body}, err: err}
	}()
	return f
}

// run waits (at most 10 s after what: the answers it waits for come within
// milliseconds, and a broken waiter should fail make mutate fast) for f's
// answer, checks it against the OpenAPI document, requires a 200 and
// returns the run it holds.
func (f *inFlight) run(t *testing.T, what string) runView {
	t.Helper()
	select {
	case a := <-f.done:
		require.NoError(t, a.err)
		if f.checked {
			validateResponse(t, f.input, a.resp)
		}
		require.Equal(t, http.StatusOK, a.resp.Status, "%s", a.resp.Body)
		var v runView
		a.resp.json(t, &v)
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no answer within 10s after %s", what)
		return runView{}
	}
}

// quiet sends r like do, for polling loops.
func (c *client) quiet(t *testing.T, r req) response { return c.do(t, r, true) }

// request builds the http.Request of r.
func (c *client) request(t *testing.T, r req) *http.Request {
	t.Helper()
	body := bodyBytes(t, r.body)
	hr, err := http.NewRequest(r.method, c.base+r.path, bytes.NewReader(body))
	require.NoError(t, err)
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	switch r.key {
	case "":
		hr.Header.Set("X-API-Key", writeSecret)
	case "-":
	default:
		hr.Header.Set("X-API-Key", r.key)
	}
	for k, v := range r.header {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	return hr
}

// validateRequest finds the route of hr in the document and, when strict,
// validates the request. ok is false when the route is unknown to the
// document (then strict requests fail the test).
func validateRequest(t *testing.T, hr *http.Request, body []byte, strict bool) (*openapi3filter.RequestValidationInput, bool) {
	t.Helper()
	_, router := openAPIDoc(t)
	route, params, err := router.FindRoute(hr)
	if err != nil {
		if strict {
			t.Errorf("%s %s is not in the OpenAPI document: %v", hr.Method, hr.URL.Path, err)
		}
		return nil, false
	}
	input := &openapi3filter.RequestValidationInput{
		Request: hr, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	if strict {
		if err := openapi3filter.ValidateRequest(context.Background(), input); err != nil {
			t.Errorf("request %s %s does not match the OpenAPI document: %v", hr.Method, hr.URL, err)
		}
	}
	hr.Body = io.NopCloser(bytes.NewReader(body))
	return input, true
}

// validateResponse checks a buffered response against the document.
func validateResponse(t *testing.T, input *openapi3filter.RequestValidationInput, r response) {
	t.Helper()
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: input, Status: r.Status, Header: r.Header,
		Body:    io.NopCloser(bytes.NewReader(r.Body)),
		Options: &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("response %d to %s %s does not match the OpenAPI document: %v\nbody: %s",
			r.Status, input.Request.Method, input.Request.URL, err, truncate(r.Body))
	}
}

// stream opens a streaming request (SSE) after validating it, checks the
// response head against the document and returns the open response.
func (c *client) stream(t *testing.T, r req) *http.Response {
	t.Helper()
	hr := c.request(t, r)
	input, ok := validateRequest(t, hr, nil, true)
	require.True(t, ok)
	resp, err := c.hc.Do(hr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		body := readAll(t, resp.Body)
		validateResponse(t, input, response{Status: resp.StatusCode, Header: resp.Header, Body: body})
		t.Fatalf("stream %s: status %d: %s", r.path, resp.StatusCode, body)
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: input, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(strings.NewReader("")), Options: &openapi3filter.Options{ExcludeResponseBody: true, IncludeResponseStatus: true},
	}
	require.NoError(t, openapi3filter.ValidateResponse(context.Background(), out))
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	return resp
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}
