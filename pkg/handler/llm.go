package handler

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/braidhq/braid/pkg/worker"
)

// llmConfig is the llm handler's node config.
type llmConfig struct {
	Prompt      string   // required: the user message
	System      string   // optional system message
	Model       string   // default Config.LLMModel
	Temperature *float64 // optional, 0..2
	MaxTokens   *int     // optional, > 0
}

func decodeLLMConfig(raw []byte) (llmConfig, error) {
	o, err := parseObject(raw)
	if err != nil {
		return llmConfig{}, err
	}
	var c llmConfig
	err = o.getAll(field{"prompt", &c.Prompt}, field{"system", &c.System}, field{"model", &c.Model},
		field{"temperature", &c.Temperature}, field{"max_tokens", &c.MaxTokens})
	if err != nil {
		return llmConfig{}, err
	}
	return c, c.validate()
}

func (c *llmConfig) validate() error {
	if strings.TrimSpace(c.Prompt) == "" {
		return fmt.Errorf("config field %q is required", "prompt")
	}
	if t := c.Temperature; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 2) {
		return fmt.Errorf("config field %q: want 0..2, got %g", "temperature", *t)
	}
	if n := c.MaxTokens; n != nil && *n <= 0 {
		return fmt.Errorf("config field %q: want > 0, got %d", "max_tokens", *n)
	}
	return nil
}

// llmUsage counts tokens as OpenAI-compatible APIs report them.
type llmUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// llmOutput is the llm handler's output. Result repeats Text so seed-style
// templates such as << summarise.result >> resolve.
type llmOutput struct {
	Text         string   `json:"text"`
	Model        string   `json:"model"`
	Usage        llmUsage `json:"usage"`
	FinishReason string   `json:"finish_reason"`
	Result       string   `json:"result"`
}

// llmHandler asks an OpenAI-compatible chat completions endpoint, or a
// deterministic mock when Config.LLMBaseURL is empty.
// Its client may reach LLMBaseURL's host:port even on a refused range.
type llmHandler struct {
	cfg    Config
	client *http.Client
}

// Handle returns {text, model, usage, finish_reason, result}.
func (h *llmHandler) Handle(ctx context.Context, task *worker.Task) (any, error) {
	c, err := decodeLLMConfig(task.Config)
	if err != nil {
		return nil, configError("llm", err)
	}
	if c.Model == "" {
		c.Model = h.cfg.LLMModel
	}
	if h.cfg.LLMBaseURL == "" {
		return llmMock(ctx, c)
	}
	return h.complete(ctx, task, c)
}
