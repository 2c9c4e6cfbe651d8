package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/worker"
)

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature *float64      `json:"temperature,omitempty"`
	MaxTokens   *int          `json:"max_tokens,omitempty"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message      chatMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
	Usage llmUsage `json:"usage"`
}

// complete POSTs a chat completion request. 5xx, 408, 429 and network errors
// are retryable, other non-2xx statuses permanent. No error holds the API key.
func (h *llmHandler) complete(ctx context.Context, task *worker.Task, c llmConfig) (any, error) {
	op := "llm POST " + h.endpoint()
	req, err := h.newRequest(ctx, task, c)
	if err != nil {
		return nil, worker.Permanent(h.redact(fmt.Errorf("%s: %w", op, err)))
	}
	start := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, h.redact(requestError(ctx, op, req, start, err))
	}
	defer resp.Body.Close()
	body, dropped, err := readCapped(resp.Body, h.cfg.MaxOutputBytes)
	if err != nil {
		return nil, h.redact(requestError(ctx, op, req, start, err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, h.redact(statusError(op, resp.StatusCode, nil, apiErrorText(body)))
	}
	if dropped > 0 {
		return nil, fmt.Errorf("%s: response exceeds %d bytes", op, h.cfg.MaxOutputBytes)
	}
	out, err := parseChatResponse(body)
	if err != nil {
		return nil, h.redact(fmt.Errorf("%s: %w", op, err))
	}
	task.Log("handler", fmt.Sprintf("llm model=%s tokens=%d in %s", out.Model, out.Usage.TotalTokens, time.Since(start).Round(time.Millisecond)))
	return out, nil
}

// endpoint is the chat completions URL without credentials or query.
func (h *llmHandler) endpoint() string {
	u, err := url.Parse(strings.TrimRight(h.cfg.LLMBaseURL, "/") + "/chat/completions")
	if err != nil {
		return "(invalid LLMBaseURL)"
	}
	return safeURL(u)
}

func (h *llmHandler) newRequest(ctx context.Context, task *worker.Task, c llmConfig) (*http.Request, error) {
	if err := checkHTTPURL(h.cfg.LLMBaseURL); err != nil {
		return nil, fmt.Errorf("LLMBaseURL: %w", err)
	}
	msgs := make([]chatMessage, 0, 2)
	if c.System != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: c.System})
	}
	msgs = append(msgs, chatMessage{Role: "user", Content: c.Prompt})
	body, err := json.Marshal(chatRequest{Model: c.Model, Messages: msgs, Temperature: c.Temperature, MaxTokens: c.MaxTokens})
	if err != nil {
		return nil, err
	}
	u := strings.TrimRight(h.cfg.LLMBaseURL, "/") + "/chat/completions"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("build request failed")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", task.IdempotencyKey)
	if h.cfg.LLMAPIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg.LLMAPIKey)
	}
	return req, nil
}

// parseChatResponse extracts the first choice of a response body.
func parseChatResponse(body []byte) (*llmOutput, error) {
	var r chatResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, errors.New("response is not a chat completion JSON object")
	}
	if len(r.Choices) == 0 {
		return nil, errors.New("response has no choices")
	}
	ch := r.Choices[0]
	if r.Usage.TotalTokens == 0 {
		r.Usage.TotalTokens = r.Usage.PromptTokens + r.Usage.CompletionTokens
	}
	return &llmOutput{Text: ch.Message.Content, Model: r.Model, Usage: r.Usage,
		FinishReason: ch.FinishReason, Result: ch.Message.Content}, nil
}

// apiErrorText is the message of an OpenAI-style {"error": {"message": ...}}
// body, else the body's text, cut to maxSnippet bytes.
func apiErrorText(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return truncRunes(e.Error.Message, maxSnippet)
	}
	return truncRunes(strings.TrimSpace(string(body)), maxSnippet)
}

// truncRunes cuts s to at most n bytes on a rune boundary, marking the cut.
func truncRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:validPrefix([]byte(s[:n]))] + "…"
}

// redact returns err with the API key replaced by "[redacted]". A redacted
// error keeps only its message and whether it was permanent, so not even an
// unwrapped cause holds the key.
func (h *llmHandler) redact(err error) error {
	key := h.cfg.LLMAPIKey
	if err == nil || key == "" || !strings.Contains(err.Error(), key) {
		return err
	}
	clean := errors.New(strings.ReplaceAll(err.Error(), key, "[redacted]"))
	if worker.IsPermanent(err) {
		return worker.Permanent(clean)
	}
	return clean
}
