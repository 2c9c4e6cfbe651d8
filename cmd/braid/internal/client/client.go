package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults applied to zero Options fields.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultHeaderTimeout = 10 * time.Second
	dialTimeout          = 5 * time.Second
)

// maxResponseBody bounds a successful JSON response.
const maxResponseBody = 64 << 20

// Options configures a Client.
type Options struct {
	// BaseURL is the API root, e.g. http://127.0.0.1:8080. Required.
	BaseURL string
	// APIKey is sent as X-API-Key when not empty.
	APIKey string
	// Timeout bounds one plain request from dial to the end of the body; default 30s.
	Timeout time.Duration
	// HeaderTimeout bounds the wait for a stream's response headers; default 10s.
	HeaderTimeout time.Duration
}

// Client talks to one Braid API. It is safe for concurrent use.
type Client struct {
	base   *url.URL
	key    string
	plain  *http.Client
	stream *http.Client
}

// New validates opts and returns a Client.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(opts.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("api url %q: want http://host:port or https://host:port", opts.BaseURL)
	}
	// Two transports: a plain request is bounded as a whole by Timeout
	// (a GET /runs/{id}?wait= answers only when the run ends, so its
	// headers may take most of that), a stream has no end to bound, so
	// only its headers are.
	transport := func(headerTimeout time.Duration) *http.Transport {
		return &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: dialTimeout}).DialContext,
			TLSHandshakeTimeout:   dialTimeout,
			ResponseHeaderTimeout: headerTimeout,
			MaxIdleConnsPerHost:   4,
		}
	}
	return &Client{
		base:   u,
		key:    opts.APIKey,
		plain:  &http.Client{Transport: transport(0), Timeout: cmp.Or(opts.Timeout, DefaultTimeout)},
		stream: &http.Client{Transport: transport(cmp.Or(opts.HeaderTimeout, DefaultHeaderTimeout))},
	}, nil
}

// BaseURL returns the API root the client talks to.
func (c *Client) BaseURL() string { return c.base.String() }

// newRequest builds a request for path (which may carry a query) with the key set.
func (c *Client) newRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	if c.key != "" {
		req.Header.Set("X-API-Key", c.key)
	}
	return req, nil
}

// send performs req with hc and returns the response when its status is
// 2xx; otherwise it closes the body and returns a *Problem.
func send(hc *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, decodeProblem(resp)
}

// doJSON sends body (when not nil) and decodes a JSON answer into out (when
// not nil). It returns the raw answer too, for --output json.
func (c *Client) doJSON(ctx context.Context, method, path string, body []byte, out any) (json.RawMessage, error) {
	raw, _, err := c.doJSONHeader(ctx, method, path, nil, body, out)
	return raw, err
}

// doJSONHeader is doJSON with extra request headers; it returns the
// answer's headers too.
func (c *Client) doJSONHeader(ctx context.Context, method, path string, hdr http.Header, body []byte, out any) (json.RawMessage, http.Header, error) {
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := send(c.plain, req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return nil, resp.Header, fmt.Errorf("%s %s: read response: %w", method, path, err)
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return raw, resp.Header, fmt.Errorf("%s %s: decode response: %w", method, path, err)
		}
	}
	return raw, resp.Header, nil
}
