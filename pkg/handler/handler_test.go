package handler

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/braidhq/braid/pkg/worker"
	"github.com/stretchr/testify/require"
)

// logRecorder collects Task.Log lines.
type logRecorder struct {
	mu    sync.Mutex
	lines map[string][]string
}

func (r *logRecorder) log(stream, line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lines == nil {
		r.lines = map[string][]string{}
	}
	r.lines[stream] = append(r.lines[stream], line)
}

func (r *logRecorder) get(stream string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines[stream])
}

// newTask returns a task with the given config and a log recorder.
func newTask(t *testing.T, config string) (*worker.Task, *logRecorder) {
	t.Helper()
	rec := &logRecorder{}
	return &worker.Task{
		RunID: "run-1", Workflow: "wf", Version: 1, NodeID: "node-a",
		Instance: 0, Count: 1, Attempt: 1, Config: json.RawMessage(config),
		IdempotencyKey: "run-1/node-a/0/1", WorkerID: "w1", Log: rec.log,
	}, rec
}

// asJSON marshals v and decodes it generically, as the runtime would see it.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// asMap is asJSON for object outputs.
func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := asJSON(t, v).(map[string]any)
	require.True(t, ok, "output %#v is not an object", v)
	return m
}

// handle runs handler name from Builtins(cfg) on a task with config.
func handle(t *testing.T, cfg Config, name, config string) (any, *logRecorder, error) {
	t.Helper()
	task, rec := newTask(t, config)
	out, err := Builtins(cfg)[name].Handle(t.Context(), task)
	return out, rec, err
}

// requirePermanent asserts err is permanent and mentions every fragment.
func requirePermanent(t *testing.T, err error, fragments ...string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, worker.IsPermanent(err), "want permanent error, got %v", err)
	for _, f := range fragments {
		require.Contains(t, err.Error(), f)
	}
}

// requireRetryable asserts err is non-nil and not permanent.
func requireRetryable(t *testing.T, err error, fragments ...string) {
	t.Helper()
	require.Error(t, err)
	require.False(t, worker.IsPermanent(err), "want retryable error, got %v", err)
	for _, f := range fragments {
		require.Contains(t, err.Error(), f)
	}
}

func TestBuiltinsNames(t *testing.T) {
	t.Parallel()
	names := make([]string, 0, 6)
	for name, h := range Builtins(Config{}) {
		require.NotNil(t, h, name)
		names = append(names, name)
	}
	sort.Strings(names)
	require.Equal(t, []string{"http", "llm", "noop", "shell", "simulate", "transform"}, names)
	// The stock workers' consumer group is the built-in set's: a worker of
	// every built-in handler joins worker.DefaultGroup.
	require.Equal(t, worker.BuiltinHandlers, names)
	require.Equal(t, worker.DefaultGroup, worker.GroupFor(names))
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c := Config{MaxOutputBytes: -5}.withDefaults()
	require.Equal(t, DefaultLLMModel, c.LLMModel)
	require.Equal(t, DefaultMaxOutputBytes, c.MaxOutputBytes)
	require.Equal(t, DefaultShellPath, c.ShellPath)

	kept := Config{LLMModel: "m", MaxOutputBytes: 7, ShellPath: "/bin/bash"}.withDefaults()
	require.Equal(t, "m", kept.LLMModel)
	require.Equal(t, 7, kept.MaxOutputBytes)
	require.Equal(t, "/bin/bash", kept.ShellPath)
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "zero", cfg: Config{}},
		{name: "https base", cfg: Config{LLMBaseURL: "https://api.example.com/v1"}},
		{name: "negative cap", cfg: Config{MaxOutputBytes: -1}, wantErr: "MaxOutputBytes"},
		{name: "ftp base", cfg: Config{LLMBaseURL: "ftp://x/v1"}, wantErr: `scheme "ftp"`},
		{name: "relative base", cfg: Config{LLMBaseURL: "/v1"}, wantErr: "LLMBaseURL"},
		{name: "key never shown", cfg: Config{LLMBaseURL: "::sk-secret", LLMAPIKey: "sk-secret"}, wantErr: "LLMBaseURL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			require.NotContains(t, err.Error(), "sk-secret")
		})
	}
}

func TestCheckRedirect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	req := func(u string) *http.Request {
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		require.NoError(t, err)
		return r
	}
	require.NoError(t, checkRedirect(req("https://a/b"), nil))
	require.ErrorContains(t, checkRedirect(req("file:///etc/passwd"), []*http.Request{req("http://a")}), `scheme "file"`)
	via := make([]*http.Request, maxRedirects)
	require.ErrorContains(t, checkRedirect(req("http://a"), via), "redirects")
}
