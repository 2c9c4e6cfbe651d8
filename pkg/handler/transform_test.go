package handler

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTransform(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config string
		want   string
	}{
		{name: "one result", config: `{"jq": ".a.b", "input": {"a": {"b": [1, 2]}}}`, want: `[1,2]`},
		{name: "many results", config: `{"jq": ".[] | select(. > 1)", "input": [1, 2, 3]}`, want: `[2,3]`},
		{name: "no result", config: `{"jq": "empty", "input": 1}`, want: `null`},
		{name: "object construction", config: `{"jq": "{n: (.items | length)}", "input": {"items": ["x", "y"]}}`, want: `{"n":2}`},
		{name: "big number arithmetic", config: `{"jq": ".n + 1", "input": {"n": 41}}`, want: `42`},
		{name: "big integer exact", config: `{"jq": ".n", "input": {"n": 12345678901234567890}}`, want: `12345678901234567890`},
		{name: "nan is null", config: `{"jq": "nan", "input": null}`, want: `null`},
		{name: "no input means null", config: `{"jq": ". == null"}`, want: `true`},
		{name: "env is empty", config: `{"jq": "env | length"}`, want: `0`},
		{name: "no jq returns input", config: `{"input": {"k": [1]}, "extra": true}`, want: `{"k":[1]}`},
		{name: "no jq null input", config: `{"input": null}`, want: `null`},
		{name: "no jq no input returns config", config: `{"op": "upper", "data": "x"}`, want: `{"data":"x","op":"upper"}`},
		{name: "null config", config: `null`, want: `null`},
		{name: "array config", config: `[1, 2]`, want: `[1,2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, _, err := handle(t, Config{}, NameTransform, tt.config)
			require.NoError(t, err)
			b, err := json.Marshal(out)
			require.NoError(t, err)
			require.JSONEq(t, tt.want, string(b))
		})
	}
}

func TestTransformErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config string
		want   []string
	}{
		{name: "parse error", config: `{"jq": ".a |", "input": {}}`, want: []string{"transform: invalid config", `parse jq ".a |"`}},
		{name: "compile error", config: `{"jq": "nosuchfn(1)", "input": {}}`, want: []string{"compile jq", "nosuchfn"}},
		{name: "jq type", config: `{"jq": 5}`, want: []string{`config field "jq": want string, got number`}},
		{name: "runtime error", config: `{"jq": ".[]", "input": 5}`, want: []string{"transform: jq:", "cannot iterate"}},
		{name: "error builtin", config: `{"jq": "error(\"boom\")"}`, want: []string{"boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := handle(t, Config{}, NameTransform, tt.config)
			requirePermanent(t, err, tt.want...)
		})
	}
}

func TestTransformHonoursContext(t *testing.T) {
	t.Parallel()
	task, _ := newTask(t, `{"jq": "last(range(1e15))"}`)
	ctx := newManualContext()
	done := make(chan error, 1)
	go func() {
		_, err := Builtins(Config{})[NameTransform].Handle(ctx, task)
		done <- err
	}()
	ctx.end(context.DeadlineExceeded)
	select {
	case err := <-done:
		requireRetryable(t, err, "transform: timed out after")
	case <-time.After(10 * time.Second):
		t.Fatal("jq program ignored the context")
	}
}

func TestJQCacheBounded(t *testing.T) {
	t.Parallel()
	c := newJQCache(4)
	first, err := c.compile(".a")
	require.NoError(t, err)
	again, err := c.compile(".a")
	require.NoError(t, err)
	require.Same(t, first, again, "a hit returns the cached program")
	for i := range 20 {
		_, err := c.compile(fmt.Sprintf(".a + %d", i))
		require.NoError(t, err)
		require.LessOrEqual(t, c.len(), 4)
	}
	_, err = c.compile(".[")
	require.Error(t, err)
	require.LessOrEqual(t, c.len(), 4)
}
