package handler

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEgressRedirectToLoopbackRefused: a server the operator opened by its
// exact address redirects to another loopback port; the redirect is
// refused at dial time and the other port sees no connection.
func TestEgressRedirectToLoopbackRefused(t *testing.T) {
	t.Parallel()
	target, targetLn := newCountingServer(t)
	_, targetPort := hostPort(t, target)
	allowed := httptest.NewServer(http.RedirectHandler(target.URL+"/internal?token=secret", http.StatusFound))
	t.Cleanup(allowed.Close)

	cfg := allowing(t, Config{}, allowed.URL)
	out, _, err := handle(t, cfg, NameHTTP, jsonConfig(t, map[string]any{"url": allowed.URL + "/start"}))
	require.Nil(t, out)
	requirePermanent(t, err, "http GET "+allowed.URL+"/start: redirect to http://127.0.0.1:"+targetPort+"/internal: ",
		"egress refused: 127.0.0.1 is loopback")
	require.NotContains(t, err.Error(), "secret")
	targetLn.requireNoAccepts(t)
}

// TestEgressOwnListenersRefused: the api's port and Redis (stand-ins on
// loopback) stay refused whatever opens loopback: braid dev's
// AllowLoopback, an allow entry, any spelling. Nothing reaches them.
func TestEgressOwnListenersRefused(t *testing.T) {
	t.Parallel()
	api, redis := newCountingListener(t, "127.0.0.1:0"), newCountingListener(t, "127.0.0.1:0")
	health := newCountingListener(t, ":0") // every interface, as BRAID_WORKER_HTTP_ADDR=":9000" would
	for _, l := range []*countingListener{api, redis, health} {
		l.serveAndClose(t)
	}
	port := func(l *countingListener) string { _, p, _ := net.SplitHostPort(l.Addr().String()); return p }
	dev := Config{Egress: Egress{AllowLoopback: true, Allow: MustParseAllowList("127.0.0.0/8,localhost"), Own: []Listener{
		{Name: "api", Addr: api.Addr().String()}, {Name: "redis", Addr: "localhost:" + port(redis)},
		{Name: "health", Addr: ":" + port(health)},
	}}}
	tests := []struct{ name, url, want string }{
		{"api", "http://" + api.Addr().String() + "/runs", "is Braid's own api listener"},
		{"api via 0.0.0.0", "http://0.0.0.0:" + port(api) + "/", "is Braid's own api listener"},
		{"api v4-mapped", "http://[::ffff:127.0.0.1]:" + port(api) + "/", "is Braid's own api listener"},
		{"redis by address", "http://127.0.0.1:" + port(redis) + "/", "is Braid's own redis listener (localhost:" + port(redis) + ")"},
		{"redis by name", "http://localhost:" + port(redis) + "/", "is Braid's own redis listener"},
		{"redis decimal", "http://2130706433:" + port(redis) + "/", "is Braid's own redis listener"},
		{"health on every interface", "http://127.0.0.1:" + port(health) + "/", "is Braid's own health listener"},
	}
	t.Run("cases", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				_, _, err := handle(t, dev, NameHTTP, jsonConfig(t, map[string]any{"url": tt.url}))
				requirePermanent(t, err, "egress refused: ", tt.want, "cannot be allowed")
				_, _, err = handle(t, Config{}, NameHTTP, jsonConfig(t, map[string]any{"url": tt.url}))
				requirePermanent(t, err, "egress refused: ", "(allow it with BRAID_HTTP_ALLOW)")
			})
		}
	})
	for _, l := range []*countingListener{api, redis, health} {
		l.requireNoAccepts(t)
	}

	other := newHTTPServer(t, 200, "text/plain", "dev server")
	out, _, err := handle(t, dev, NameHTTP, jsonConfig(t, map[string]any{"url": other.URL}))
	require.NoError(t, err, "AllowLoopback opens loopback ports that are not the stack's")
	require.Equal(t, "dev server", asMap(t, out)["body"])
}

// TestEgressLLMEndpointOnly: the operator's LLM endpoint on loopback is
// reachable by the llm handler, but that opens neither the http handler
// to it nor the llm handler to another loopback port by a redirect.
func TestEgressLLMEndpointOnly(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, 200, `{"model": "m", "choices": [{"message": {"role": "assistant", "content": "hi"}}]}`)
	cfg := Config{LLMBaseURL: srv.URL + "/v1", LLMAPIKey: "sk-egress-secret"}
	out, _, err := handle(t, cfg, NameLLM, `{"prompt": "p"}`)
	require.NoError(t, err)
	require.Equal(t, "hi", asMap(t, out)["text"])

	_, _, err = handle(t, cfg, NameHTTP, jsonConfig(t, map[string]any{"url": srv.URL + "/v1/chat/completions"}))
	requirePermanent(t, err, "egress refused: 127.0.0.1 is loopback")

	target, targetLn := newCountingServer(t)
	redirecting := httptest.NewServer(http.RedirectHandler(target.URL+"/v1/chat/completions", http.StatusTemporaryRedirect))
	t.Cleanup(redirecting.Close)
	cfg.LLMBaseURL = redirecting.URL + "/v1"
	_, _, err = handle(t, cfg, NameLLM, `{"prompt": "p"}`)
	requirePermanent(t, err, "llm POST "+redirecting.URL+"/v1/chat/completions: redirect to "+target.URL, "egress refused: 127.0.0.1 is loopback")
	require.NotContains(t, err.Error(), "sk-egress-secret")
	targetLn.requireNoAccepts(t)
}

// TestHTTPBodyReadIsBounded: an endless body is read up to the output cap
// plus maxDiscard, counted, and the call returns.
func TestHTTPBodyReadIsBounded(t *testing.T) {
	t.Parallel()
	chunk := strings.Repeat("x", 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	out, _, err := handle(t, allowing(t, Config{MaxOutputBytes: 1024}, srv.URL), NameHTTP, jsonConfig(t, map[string]any{"url": srv.URL}))
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("x", 1024)+truncMarker(maxDiscard), asMap(t, out)["body"])
}

// TestHandlerClients: both handlers' clients dial through a guard, use no
// proxy from the environment (it would hide the target from the guard),
// and bound the whole call.
func TestHandlerClients(t *testing.T) {
	t.Parallel()
	hs := Builtins(Config{LLMBaseURL: "http://127.0.0.1:11434/v1"})
	for _, c := range []*http.Client{hs[NameHTTP].(*httpHandler).client, hs[NameLLM].(*llmHandler).client} {
		tr := c.Transport.(tracedTransport).next.(*http.Transport)
		require.Nil(t, tr.Proxy)
		require.NotNil(t, tr.DialContext)
		require.Equal(t, callTimeout, c.Timeout)
		require.Equal(t, responseHeaderTimeout, tr.ResponseHeaderTimeout)
		require.NotNil(t, c.CheckRedirect)
	}
}
