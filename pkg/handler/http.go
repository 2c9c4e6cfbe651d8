package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/worker"
)

// httpHandler makes one HTTP request per attempt, through a client whose
// dialer refuses what Config.Egress does not allow.
type httpHandler struct {
	cfg    Config
	client *http.Client
}

// Handle sends the request (always with an Idempotency-Key header) and returns
// {status, headers, body}. 5xx, 408, 429 and network errors are retryable;
// any other unexpected status is permanent. The output is returned with the
// error when a response arrived.
func (h *httpHandler) Handle(ctx context.Context, task *worker.Task) (any, error) {
	c, err := decodeHTTPConfig(task.Config)
	if err != nil {
		return nil, configError("http", err)
	}
	if c.Mock {
		return httpMock(ctx, task, c)
	}
	if d := c.timeout(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	req, err := newHTTPRequest(ctx, task, c)
	if err != nil {
		return nil, configError("http", err)
	}
	return h.do(ctx, task, req, c.ExpectStatus)
}

// do sends req and turns the response into output and a classified error.
func (h *httpHandler) do(ctx context.Context, task *worker.Task, req *http.Request, expect statusSet) (any, error) {
	op := "http " + req.Method + " " + safeURL(req.URL)
	start := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, requestError(ctx, op, req, start, err)
	}
	defer resp.Body.Close()
	out, err := readHTTPResponse(resp, h.cfg.MaxOutputBytes)
	if err != nil {
		return nil, requestError(ctx, op, req, start, err)
	}
	task.Log("handler", fmt.Sprintf("%s: %d in %s", op, resp.StatusCode, time.Since(start).Round(time.Millisecond)))
	if expect.accepts(resp.StatusCode) {
		return out, nil
	}
	return out, statusError(op, resp.StatusCode, expect, out.snippet())
}

// newHTTPRequest builds the request described by c.
func newHTTPRequest(ctx context.Context, task *worker.Task, c httpConfig) (*http.Request, error) {
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, fmt.Errorf("config field %q: not a valid URL", "url")
	}
	if len(c.Query) > 0 {
		q := u.Query()
		for k, v := range c.Query {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
	}
	body, contentType, err := requestBody(c.Body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	setHeaders(req, c.Headers, contentType, task.IdempotencyKey)
	return req, nil
}

// requestBody encodes the config body: a JSON string is sent raw, any other
// JSON value as application/json; absent or null sends no body.
func requestBody(raw json.RawMessage) (io.Reader, string, error) {
	if isNull(raw) {
		return nil, "", nil
	}
	if jsonKind(raw) == "string" {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, "", fmt.Errorf("config field %q: %v", "body", err)
		}
		return strings.NewReader(s), "", nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, "", fmt.Errorf("config field %q: %v", "body", err)
	}
	return &buf, "application/json", nil
}

// setHeaders applies configured headers, then defaults they did not set.
func setHeaders(req *http.Request, headers scalarMap, contentType, idemKey string) {
	for k, v := range headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	if contentType != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", contentType)
	}
	if idemKey != "" && req.Header.Get("Idempotency-Key") == "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
}

// safeURL renders u for messages without user info, query or fragment,
// which may carry credentials.
func safeURL(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// requestError classifies a transport failure: permanent when the egress
// guard refused the address (it would refuse it again), else retryable.
// The *url.Error wrapper (which repeats the full URL) is dropped; a refused
// redirect is named, without credentials.
func requestError(ctx context.Context, op string, req *http.Request, start time.Time, err error) error {
	if ee, ok := errors.AsType[*EgressError](err); ok {
		return worker.Permanent(fmt.Errorf("%s: %s%w", op, redirectNote(req, err), ee))
	}
	if ctx.Err() != nil {
		return ctxError(ctx, op, start)
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return fmt.Errorf("%s: %w", op, err)
}

// redirectNote is "redirect to <url>: " when err happened on a redirect
// away from req's URL, else "".
func redirectNote(req *http.Request, err error) string {
	ue, ok := errors.AsType[*url.Error](err)
	if !ok {
		return ""
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil || safeURL(u) == safeURL(req.URL) {
		return ""
	}
	return "redirect to " + safeURL(u) + ": "
}

// statusError is the error for an unexpected status: retryable for 5xx,
// 408 and 429, permanent otherwise.
func statusError(op string, status int, expect statusSet, snippet string) error {
	err := fmt.Errorf("%s: unexpected status %d (want %s)", op, status, expect)
	if snippet != "" {
		err = fmt.Errorf("%w: %s", err, snippet)
	}
	if retryableStatus(status) {
		return err
	}
	return worker.Permanent(err)
}

func retryableStatus(status int) bool {
	return status >= 500 || status == http.StatusTooManyRequests || status == http.StatusRequestTimeout
}
