package handler

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLLMMockDeterministic(t *testing.T) {
	t.Parallel()
	config := `{"prompt": "Summarise   the\nquarterly report", "system": "be brief", "temperature": 0.2}`
	out1, _, err := handle(t, Config{}, NameLLM, config)
	require.NoError(t, err)
	out2, _, err := handle(t, Config{}, NameLLM, config)
	require.NoError(t, err)
	m := asMap(t, out1)
	require.Equal(t, m, asMap(t, out2))

	text := m["text"].(string)
	require.True(t, strings.HasPrefix(text, "[mock completion] Summarise the quarterly report (fnv "), text)
	require.Equal(t, text, m["result"])
	require.Equal(t, "mock", m["model"])
	require.Equal(t, "stop", m["finish_reason"])
	usage := m["usage"].(map[string]any)
	require.Equal(t, 6.0, usage["prompt_tokens"]) // 2 system + 4 prompt words
	require.Equal(t, float64(len(strings.Fields(text))), usage["completion_tokens"])
	require.Equal(t, usage["prompt_tokens"].(float64)+usage["completion_tokens"].(float64), usage["total_tokens"])

	other, _, err := handle(t, Config{}, NameLLM, `{"prompt": "Summarise the quarterly report", "system": "be verbose"}`)
	require.NoError(t, err)
	require.NotEqual(t, text, asMap(t, other)["text"], "the hash covers the system prompt")
}

func TestLLMMockLongPrompt(t *testing.T) {
	t.Parallel()
	out, _, err := handle(t, Config{}, NameLLM, jsonConfig(t, map[string]any{"prompt": strings.Repeat("é", 500)}))
	require.NoError(t, err)
	text := asMap(t, out)["text"].(string)
	require.Contains(t, text, strings.Repeat("é", mockSummaryRunes)+"… (fnv ")
	require.NotContains(t, text, strings.Repeat("é", mockSummaryRunes+1))
}

// chatServer is an OpenAI-compatible test endpoint.
type chatServer struct {
	*httptest.Server
	mu      sync.Mutex
	auth    []string
	bodies  []map[string]any
	status  int
	respond string
}

func newChatServer(t *testing.T, status int, respond string) *chatServer {
	t.Helper()
	s := &chatServer{status: status, respond: respond}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		s.mu.Lock()
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.status)
		// Echo the Authorization header into the response, as a careless
		// proxy might: the key must still never reach an error.
		_, _ = io.WriteString(w, strings.ReplaceAll(s.respond, "$AUTH", r.Header.Get("Authorization")))
	}))
	t.Cleanup(s.Close)
	return s
}

const chatOK = `{"id": "c1", "model": "gpt-test-2025", "choices": [{"index": 0,
  "message": {"role": "assistant", "content": "Revenue grew."}, "finish_reason": "stop"}],
  "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}`

func TestLLMRealEndpoint(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, 200, chatOK)
	cfg := Config{LLMBaseURL: srv.URL + "/v1/", LLMAPIKey: "sk-test-secret"}
	out, _, err := handle(t, cfg, NameLLM, `{"prompt": "Summarise", "system": "be brief", "temperature": 0.5, "max_tokens": 64}`)
	require.NoError(t, err)
	require.Equal(t, map[string]any{
		"text": "Revenue grew.", "result": "Revenue grew.", "model": "gpt-test-2025", "finish_reason": "stop",
		"usage": map[string]any{"prompt_tokens": 12.0, "completion_tokens": 3.0, "total_tokens": 15.0},
	}, asMap(t, out))
	require.Equal(t, []string{"Bearer sk-test-secret"}, srv.auth)
	require.Equal(t, map[string]any{
		"model": DefaultLLMModel, "temperature": 0.5, "max_tokens": 64.0,
		"messages": []any{
			map[string]any{"role": "system", "content": "be brief"},
			map[string]any{"role": "user", "content": "Summarise"},
		},
	}, srv.bodies[0])
}

func TestLLMRealEndpointModelAndOptionalFields(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, 200, chatOK)
	_, _, err := handle(t, Config{LLMBaseURL: srv.URL + "/v1", LLMModel: "cfg-model"}, NameLLM, `{"prompt": "p"}`)
	require.NoError(t, err)
	_, _, err = handle(t, Config{LLMBaseURL: srv.URL + "/v1", LLMModel: "cfg-model"}, NameLLM, `{"prompt": "p", "model": "node-model"}`)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"model": "cfg-model", "messages": []any{map[string]any{"role": "user", "content": "p"}}}, srv.bodies[0])
	require.Equal(t, "node-model", srv.bodies[1]["model"])
	require.Equal(t, []string{"", ""}, srv.auth, "no key, no Authorization header")
}

func TestLLMRealEndpointErrors(t *testing.T) {
	t.Parallel()
	const key = "sk-test-secret"
	tests := []struct {
		name      string
		status    int
		respond   string
		retryable bool
		want      string
	}{
		{name: "500", status: 500, respond: `{"error": {"message": "overloaded, auth was $AUTH"}}`, retryable: true, want: "unexpected status 500"},
		{name: "429", status: 429, respond: `{"error": {"message": "slow down"}}`, retryable: true, want: "slow down"},
		{name: "401 echoes key", status: 401, respond: `{"error": {"message": "bad key $AUTH"}}`, want: "bad key Bearer [redacted]"},
		{name: "400 text", status: 400, respond: `plain $AUTH`, want: "unexpected status 400"},
		{name: "no choices", status: 200, respond: `{"choices": []}`, retryable: true, want: "no choices"},
		{name: "not json", status: 200, respond: `<html>$AUTH</html>`, retryable: true, want: "not a chat completion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newChatServer(t, tt.status, tt.respond)
			_, _, err := handle(t, Config{LLMBaseURL: srv.URL + "/v1", LLMAPIKey: key}, NameLLM, `{"prompt": "p"}`)
			if tt.retryable {
				requireRetryable(t, err, tt.want)
			} else {
				requirePermanent(t, err, tt.want)
			}
			require.Contains(t, err.Error(), "llm POST "+srv.URL+"/v1/chat/completions")
			require.NotContains(t, err.Error(), key)
		})
	}
}

func TestLLMNetworkError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	_, _, err := handle(t, Config{LLMBaseURL: base, LLMAPIKey: "sk-x"}, NameLLM, `{"prompt": "p"}`)
	requireRetryable(t, err, "llm POST")
	require.NotContains(t, err.Error(), "sk-x")
}

func TestLLMBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cfg    Config
		config string
		want   string
	}{
		{name: "no prompt", config: `{"system": "s"}`, want: `"prompt" is required`},
		{name: "prompt type", config: `{"prompt": {"a": 1}}`, want: `config field "prompt": want string, got object`},
		{name: "temperature range", config: `{"prompt": "p", "temperature": 3}`, want: `"temperature"`},
		{name: "temperature type", config: `{"prompt": "p", "temperature": "hot"}`, want: `"temperature": want number, got string`},
		{name: "max tokens", config: `{"prompt": "p", "max_tokens": 0}`, want: `"max_tokens"`},
		{name: "bad base url", cfg: Config{LLMBaseURL: "ftp://x", LLMAPIKey: "sk-x"}, config: `{"prompt": "p"}`, want: "LLMBaseURL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := handle(t, tt.cfg, NameLLM, tt.config)
			requirePermanent(t, err, tt.want)
			require.NotContains(t, err.Error(), "sk-x")
		})
	}
}
