package handler

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
)

// mockSummaryRunes caps how much of the prompt the mock completion quotes.
const mockSummaryRunes = 120

// llmMock returns a deterministic completion: the same config always yields
// the same output. Token counts are word counts.
func llmMock(ctx context.Context, c llmConfig) (*llmOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("llm mock: %w", err)
	}
	text := fmt.Sprintf("[mock completion] %s (fnv %016x)", summarise(c.Prompt), mockHash(c))
	prompt := len(strings.Fields(c.System)) + len(strings.Fields(c.Prompt))
	completion := len(strings.Fields(text))
	return &llmOutput{
		Text:         text,
		Model:        "mock",
		Usage:        llmUsage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion},
		FinishReason: "stop",
		Result:       text,
	}, nil
}

// summarise collapses whitespace and keeps the first mockSummaryRunes runes.
func summarise(s string) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= mockSummaryRunes {
		return string(r)
	}
	return string(r[:mockSummaryRunes]) + "…"
}

// mockHash fingerprints everything that shapes a completion.
func mockHash(c llmConfig) uint64 {
	h := fnv.New64a()
	for _, s := range []string{c.Model, c.System, c.Prompt} {
		_, _ = h.Write([]byte(s))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}
