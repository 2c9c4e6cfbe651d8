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

// httpHandler makes one HTTP request per attempt.
type httpHandler struct{ cfg Config }

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
	resp, err := h.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, requestError(ctx, op, start, err)
	}
	defer resp.Body.Close()
	out, err := readHTTPResponse(resp, h.cfg.MaxOutputBytes)
	if err != nil {
		return nil, requestError(ctx, op, start, err)
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

// requestError classifies a transport failure: always retryable. The
// *url.Error wrapper (which repeats the full URL) is dropped.
func requestError(ctx context.Context, op string, start time.Time, err error) error {
	if ctx.Err() != nil {
		return ctxError(ctx, op, start)
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return fmt.Errorf("%s: %w", op, err)
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
