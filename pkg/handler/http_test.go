package handler

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// recordedRequest is what the test server saw.
type recordedRequest struct {
	Method, Path, RawQuery, Body string
	Header                       http.Header
}

// httpServer answers every request with status, content type and body, and
// records the requests it got.
type httpServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recordedRequest
}

func newHTTPServer(t *testing.T, status int, contentType, body string) *httpServer {
	t.Helper()
	s := &httpServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, recordedRequest{r.Method, r.URL.Path, r.URL.RawQuery, string(b), r.Header.Clone()})
		s.mu.Unlock()
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.Header().Add("X-Multi", "first")
		w.Header().Add("X-Multi", "second")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

// allowing returns cfg with the egress guard opened to the exact host:port
// of rawURL (a test server on loopback), as an operator would with
// BRAID_HTTP_ALLOW; everything else stays refused.
func allowing(t *testing.T, cfg Config, rawURL string) Config {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	l, err := ParseAllowList(u.Host)
	require.NoError(t, err)
	cfg.Egress.Allow = l
	return cfg
}

func (s *httpServer) requests() []recordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recordedRequest(nil), s.reqs...)
}

func jsonConfig(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

func TestHTTPRequestShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config map[string]any
		want   recordedRequest
		wantCT string
	}{
		{name: "get defaults", config: map[string]any{},
			want: recordedRequest{Method: "GET", Path: "/items", RawQuery: "a=1"}},
		{name: "query merged", config: map[string]any{"query": map[string]any{"b": "x y", "n": 2}},
			want: recordedRequest{Method: "GET", Path: "/items", RawQuery: "a=1&b=x+y&n=2"}},
		{name: "json body", config: map[string]any{"method": "post", "body": map[string]any{"k": []int{1, 2}}},
			want: recordedRequest{Method: "POST", Path: "/items", RawQuery: "a=1", Body: `{"k":[1,2]}`}, wantCT: "application/json"},
		{name: "array body", config: map[string]any{"method": "PUT", "body": []string{"x"}},
			want: recordedRequest{Method: "PUT", Path: "/items", RawQuery: "a=1", Body: `["x"]`}, wantCT: "application/json"},
		{name: "string body raw", config: map[string]any{"method": "POST", "body": "a,b\n1,2", "headers": map[string]string{"Content-Type": "text/csv"}},
			want: recordedRequest{Method: "POST", Path: "/items", RawQuery: "a=1", Body: "a,b\n1,2"}, wantCT: "text/csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newHTTPServer(t, 200, "text/plain", "ok")
			tt.config["url"] = srv.URL + "/items?a=1"
			tt.config["headers"] = mergeHeaders(tt.config["headers"], map[string]string{"X-Trace": "t1"})
			_, _, err := handle(t, allowing(t, Config{}, srv.URL), NameHTTP, jsonConfig(t, tt.config))
			require.NoError(t, err)
			reqs := srv.requests()
			require.Len(t, reqs, 1)
			got := reqs[0]
			require.Equal(t, tt.want.Method, got.Method)
			require.Equal(t, tt.want.Path, got.Path)
			require.Equal(t, tt.want.RawQuery, got.RawQuery)
			require.Equal(t, tt.want.Body, got.Body)
			require.Equal(t, tt.wantCT, got.Header.Get("Content-Type"))
			require.Equal(t, "t1", got.Header.Get("X-Trace"))
			require.Equal(t, "run-1/node-a/0/1", got.Header.Get("Idempotency-Key"))
		})
	}
}

func mergeHeaders(cur any, add map[string]string) map[string]string {
	out := map[string]string{}
	if m, ok := cur.(map[string]string); ok {
		for k, v := range m {
			out[k] = v
		}
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}

func TestHTTPIdempotencyKeyOverride(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(t, 204, "", "")
	_, _, err := handle(t, allowing(t, Config{}, srv.URL), NameHTTP, jsonConfig(t, map[string]any{
		"url": srv.URL, "headers": map[string]string{"idempotency-key": "mine"}}))
	require.NoError(t, err)
	require.Equal(t, []string{"mine"}, srv.requests()[0].Header.Values("Idempotency-Key"))
}

func TestHTTPResponseOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		contentType string
		body        string
		wantBody    any
	}{
		{name: "json", contentType: "application/json; charset=utf-8", body: `{"id": 7, "tags": ["a"]}`,
			wantBody: map[string]any{"id": 7.0, "tags": []any{"a"}}},
		{name: "problem json", contentType: "application/problem+json", body: `[1]`, wantBody: []any{1.0}},
		{name: "text", contentType: "text/plain", body: `{"id": 7}`, wantBody: `{"id": 7}`},
		{name: "bad json kept as text", contentType: "application/json", body: `{oops`, wantBody: `{oops`},
		{name: "empty json", contentType: "application/json", body: ``, wantBody: ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newHTTPServer(t, 200, tt.contentType, tt.body)
			out, rec, err := handle(t, allowing(t, Config{}, srv.URL), NameHTTP, jsonConfig(t, map[string]any{"url": srv.URL}))
			require.NoError(t, err)
			m := asMap(t, out)
			require.Equal(t, 200.0, m["status"])
			require.Equal(t, tt.wantBody, m["body"])
			headers := m["headers"].(map[string]any)
			require.Equal(t, "first", headers["x-multi"])
			require.Equal(t, tt.contentType, headers["content-type"])
			require.Len(t, rec.get("handler"), 1)
		})
	}
}

func TestHTTPStatusClassification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		status    int
		expect    any
		wantErr   bool
		retryable bool
	}{
		{name: "200", status: 200},
		{name: "201", status: 201},
		{name: "304 not 2xx", status: 304, wantErr: true},
		{name: "400", status: 400, wantErr: true},
		{name: "404", status: 404, wantErr: true},
		{name: "408", status: 408, wantErr: true, retryable: true},
		{name: "429", status: 429, wantErr: true, retryable: true},
		{name: "500", status: 500, wantErr: true, retryable: true},
		{name: "503", status: 503, wantErr: true, retryable: true},
		{name: "expected 404", status: 404, expect: 404},
		{name: "expected list", status: 409, expect: []int{200, 409}},
		{name: "expected excludes 200", status: 200, expect: []int{201}, wantErr: true},
		{name: "expected 500", status: 500, expect: 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newHTTPServer(t, tt.status, "text/plain", "detail of the failure")
			cfg := map[string]any{"url": srv.URL + "/x?token=secret"}
			if tt.expect != nil {
				cfg["expect_status"] = tt.expect
			}
			out, _, err := handle(t, allowing(t, Config{}, srv.URL), NameHTTP, jsonConfig(t, cfg))
			require.Equal(t, float64(tt.status), asMap(t, out)["status"], "output is returned even on failure")
			if !tt.wantErr {
				require.NoError(t, err)
				return
			}
			want := []string{"unexpected status"}
			if tt.status != 304 { // a 304 has no body
				want = append(want, "detail of the failure")
			}
			if tt.retryable {
				requireRetryable(t, err, want...)
			} else {
				requirePermanent(t, err, want...)
			}
			require.Contains(t, err.Error(), "http GET "+srv.URL+"/x:")
			require.NotContains(t, err.Error(), "secret", "the query string may hold credentials")
		})
	}
}

func TestHTTPNetworkErrorRetryable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	out, _, err := handle(t, allowing(t, Config{}, url), NameHTTP, jsonConfig(t, map[string]any{"url": url + "/?k=secret"}))
	require.Nil(t, out)
	requireRetryable(t, err, "http GET "+url)
	require.NotContains(t, err.Error(), "secret")
}

func TestHTTPTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	_, _, err := handle(t, allowing(t, Config{}, srv.URL), NameHTTP, jsonConfig(t, map[string]any{"url": srv.URL, "timeout": "50ms"}))
	requireRetryable(t, err, "timed out after")
}

func TestHTTPBodyCapped(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(t, 200, "application/json", `{"data": "`+strings.Repeat("x", 100)+`"}`)
	out, _, err := handle(t, allowing(t, Config{MaxOutputBytes: 10}, srv.URL), NameHTTP, jsonConfig(t, map[string]any{"url": srv.URL}))
	require.NoError(t, err)
	require.Equal(t, `{"data": "`+truncMarker(102), asMap(t, out)["body"], "a truncated JSON body stays text")
}

func TestHTTPBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config string
		want   []string
	}{
		{name: "no url", config: `{}`, want: []string{`"url" is required`}},
		{name: "ftp", config: `{"url": "ftp://x/y"}`, want: []string{`"url"`, `scheme "ftp"`}},
		{name: "relative", config: `{"url": "/x"}`, want: []string{`"url"`}},
		{name: "method", config: `{"url": "http://x", "method": "GE T"}`, want: []string{`"method"`}},
		{name: "headers type", config: `{"url": "http://x", "headers": ["a"]}`, want: []string{`"headers"`, "want object"}},
		{name: "expect type", config: `{"url": "http://x", "expect_status": "2xx"}`, want: []string{`"expect_status"`}},
		{name: "timeout", config: `{"url": "http://x", "timeout": "soon"}`, want: []string{`"timeout"`}},
		{name: "mock type", config: `{"mock": "yes"}`, want: []string{`"mock": want boolean, got string`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := handle(t, Config{}, NameHTTP, tt.config)
			requirePermanent(t, err, append([]string{"http: invalid config"}, tt.want...)...)
		})
	}
}
