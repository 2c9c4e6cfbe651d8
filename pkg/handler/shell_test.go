package handler

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// shellConfigJSON builds a shell config with the given command and extras.
func shellConfigJSON(t *testing.T, command string, extra map[string]any) string {
	t.Helper()
	m := map[string]any{"command": command}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

func TestShellOutputModes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string
		mode    string
		want    map[string]any
	}{
		{name: "text", command: "echo '  hello  '; echo warn >&2", mode: "",
			want: map[string]any{"exit_code": 0.0, "stdout": "  hello  \n", "stderr": "warn\n", "result": "hello"}},
		{name: "json", command: `printf '{"n": 3, "l": [1, "a"]}'`, mode: "json",
			want: map[string]any{"exit_code": 0.0, "stdout": `{"n": 3, "l": [1, "a"]}`, "stderr": "",
				"json": map[string]any{"n": 3.0, "l": []any{1.0, "a"}}}},
		{name: "json null", command: "echo null", mode: "JSON",
			want: map[string]any{"exit_code": 0.0, "stdout": "null\n", "stderr": "", "json": nil}},
		{name: "lines", command: `printf 'a\n\n  \nb c\r\nd'`, mode: "lines",
			want: map[string]any{"exit_code": 0.0, "stdout": "a\n\n  \nb c\r\nd", "stderr": "", "lines": []any{"a", "b c", "d"}}},
		{name: "lines empty", command: "true", mode: "lines",
			want: map[string]any{"exit_code": 0.0, "stdout": "", "stderr": "", "lines": []any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, _, err := handle(t, Config{}, NameShell, shellConfigJSON(t, tt.command, map[string]any{"output": tt.mode}))
			require.NoError(t, err)
			require.Equal(t, tt.want, asMap(t, out))
		})
	}
}

func TestShellBadJSONOutput(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, command, wantErr string }{
		{name: "invalid", command: "echo '{nope'", wantErr: "stdout is not valid JSON"},
		{name: "empty", command: "true", wantErr: "stdout is empty"},
		{name: "two values", command: "echo '1 2'", wantErr: "stdout is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, _, err := handle(t, Config{}, NameShell, shellConfigJSON(t, tt.command, map[string]any{"output": "json"}))
			requireRetryable(t, err, "shell: output json", tt.wantErr)
			require.Equal(t, 0.0, asMap(t, out)["exit_code"], "output is kept for the failed attempt")
		})
	}
}

func TestShellNonZeroExit(t *testing.T) {
	t.Parallel()
	out, _, err := handle(t, Config{}, NameShell, shellConfigJSON(t, "echo partial; echo first >&2; echo 'disk full' >&2; echo >&2; exit 3", nil))
	requireRetryable(t, err, "exit code 3: disk full")
	m := asMap(t, out)
	require.Equal(t, 3.0, m["exit_code"])
	require.Equal(t, "partial\n", m["stdout"])
	require.Equal(t, "first\ndisk full\n\n", m["stderr"])

	_, _, err = handle(t, Config{}, NameShell, shellConfigJSON(t, "exit 4", nil))
	requireRetryable(t, err)
	require.Equal(t, "shell: exit code 4", err.Error())
}

func TestShellEnv(t *testing.T) {
	t.Setenv("BRAID_LLM_API_KEY", "sk-worker-secret") // not parallel: changes the process env
	t.Setenv("HANDLER_TEST_INHERITED", "inherited")
	t.Setenv("HANDLER_PFX_ONE", "one")
	cfg := Config{LLMAPIKey: "sk-worker-secret", PassEnv: []string{"HANDLER_TEST_INHERITED", "HANDLER_PFX_*"}}
	command := `echo "$BRAID_RUN_ID|$BRAID_NODE_ID|$BRAID_ATTEMPT|$BRAID_IDEMPOTENCY_KEY|$CUSTOM|$PORT|$HANDLER_TEST_INHERITED|$HANDLER_PFX_ONE|${BRAID_LLM_API_KEY:-none}"`
	out, _, err := handle(t, cfg, NameShell, shellConfigJSON(t, command,
		map[string]any{"env": map[string]any{"CUSTOM": "a b", "PORT": 8080, "BRAID_NODE_ID": "overridden"}}))
	require.NoError(t, err)
	require.Equal(t, "run-1|overridden|1|run-1/node-a/0/1|a b|8080|inherited|one|none", asMap(t, out)["result"])
}

// TestShellEnvIsAnAllowlist: a task sees the base variables, the task
// variables and its own env — none of the worker's configuration or
// credentials, whatever they are called.
func TestShellEnvIsAnAllowlist(t *testing.T) {
	secrets := map[string]string{
		"BRAID_API_KEYS": "admin:k-admin-secret:write", "BRAID_REDIS_URL": "redis://:pw-secret@h:6379/0",
		"AWS_SECRET_ACCESS_KEY": "aws-secret", "HANDLER_TEST_INHERITED": "inherited-secret",
	}
	for k, v := range secrets { // not parallel: changes the process env
		t.Setenv(k, v)
	}
	t.Setenv("HOME", "/home/task-test")
	out, _, err := handle(t, Config{}, NameShell, shellConfigJSON(t, "env", map[string]any{"output": "text"}))
	require.NoError(t, err)
	env := asMap(t, out)["result"].(string)
	for k, v := range secrets {
		require.NotContains(t, env, k+"=", "the worker's %s reached the task", k)
		require.NotContains(t, env, v)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(env), "\n") {
		k, _, _ := strings.Cut(line, "=")
		names[k] = true
	}
	require.True(t, names["PATH"] && names["HOME"] && names["BRAID_RUN_ID"], "base and task variables missing: %q", env)
	require.Contains(t, env, "HOME=/home/task-test")
	for k := range names {
		ok := slices.Contains(BaseEnv, k) || slices.Contains([]string{"BRAID_RUN_ID", "BRAID_NODE_ID", "BRAID_ATTEMPT", "BRAID_IDEMPOTENCY_KEY", WorkerEnv, "PWD", "SHLVL", "_", "OLDPWD"}, k)
		require.True(t, ok, "unexpected variable %s in a task's environment", k)
	}
}

func TestPassEnvRefusesWorkerConfiguration(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"BRAID_REDIS_URL", "BRAID_*", "BR*", "*", "1X", "A-B", "A B"} {
		err := Config{PassEnv: []string{bad}}.Validate()
		require.Error(t, err, "%q", bad)
		require.Contains(t, err.Error(), "PassEnv")
	}
	require.NoError(t, Config{PassEnv: []string{"AWS_REGION", "AWS_*", "http_proxy", "BRAIDED"}}.Validate())
}

func TestShellWorkdirAndShell(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, _, err := handle(t, Config{}, NameShell, shellConfigJSON(t, "pwd", map[string]any{"workdir": dir, "shell": "/bin/sh"}))
	require.NoError(t, err)
	want, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	require.Equal(t, want, asMap(t, out)["result"])
}

func TestShellBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config string
		want   []string
	}{
		{name: "null", config: `null`, want: []string{`"command" is required`}},
		{name: "blank command", config: `{"command": "  "}`, want: []string{`"command" is required`}},
		{name: "command type", config: `{"command": ["ls"]}`, want: []string{`config field "command": want string, got array`}},
		{name: "output mode", config: `{"command": "ls", "output": "xml"}`, want: []string{`"output"`, "xml"}},
		{name: "env type", config: `{"command": "ls", "env": {"A": {}}}`, want: []string{`"env"`, `key "A"`}},
		{name: "env name", config: `{"command": "ls", "env": {"A=B": "x"}}`, want: []string{`"env"`, "A=B"}},
		{name: "not object", config: `"ls"`, want: []string{"must be a JSON object"}},
		{name: "missing workdir", config: `{"command": "ls", "workdir": "/nonexistent/braid"}`, want: []string{"shell: start"}},
		{name: "missing shell", config: `{"command": "ls", "shell": "/nonexistent/sh"}`, want: []string{"shell: start"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := handle(t, Config{}, NameShell, tt.config)
			requirePermanent(t, err, tt.want...)
		})
	}
}

func TestShellUnknownKeysAccepted(t *testing.T) {
	t.Parallel()
	out, _, err := handle(t, Config{}, NameShell, `{"command": "echo ok", "action": "x", "max_retries": 2}`)
	require.NoError(t, err)
	require.Equal(t, "ok", asMap(t, out)["result"])
}

func TestShellStreamsLogLines(t *testing.T) {
	t.Parallel()
	flag := filepath.Join(t.TempDir(), "go")
	// The command prints, then waits (bounded: 1000 × 10 ms) for the test to
	// create the flag file, which it does only after seeing the line logged.
	command := `echo ready; echo oops >&2; i=0; while [ ! -f "$FLAG" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; echo done`
	task, rec := newTask(t, shellConfigJSON(t, command, map[string]any{"env": map[string]string{"FLAG": flag}}))
	type result struct {
		out any
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := Builtins(Config{})[NameShell].Handle(context.Background(), task)
		done <- result{out, err}
	}()
	require.Eventually(t, func() bool {
		return len(rec.get("stdout")) == 1 && len(rec.get("stderr")) == 1
	}, 5*time.Second, 5*time.Millisecond, "lines must be logged while the command runs")
	require.Empty(t, done, "command must still be running")
	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	select {
	case r := <-done:
		require.NoError(t, r.err)
		require.Equal(t, "ready\ndone", asMap(t, r.out)["result"])
	case <-time.After(10 * time.Second):
		t.Fatal("shell handler did not return")
	}
	require.Equal(t, []string{"ready", "done"}, rec.get("stdout"))
	require.Equal(t, []string{"oops"}, rec.get("stderr"))
}

func TestShellOutputCapped(t *testing.T) {
	t.Parallel()
	const total = 10_000_000
	out, rec, err := handle(t, Config{}, NameShell,
		shellConfigJSON(t, "head -c 10000000 /dev/zero | tr '\\0' 'a'", nil))
	require.NoError(t, err)
	m := asMap(t, out)
	marker := truncMarker(total - DefaultMaxOutputBytes)
	stdout := m["stdout"].(string)
	require.Len(t, stdout, DefaultMaxOutputBytes+len(marker))
	require.True(t, strings.HasSuffix(stdout, marker), "stdout ends %q", stdout[len(stdout)-40:])
	require.Equal(t, strings.Repeat("a", DefaultMaxOutputBytes), stdout[:DefaultMaxOutputBytes])
	lines := rec.get("stdout")
	require.Len(t, lines, 1)
	require.Equal(t, strings.Repeat("a", maxLogLine)+truncMarker(total-maxLogLine), lines[0])
}

func TestShellJSONTooLarge(t *testing.T) {
	t.Parallel()
	_, _, err := handle(t, Config{MaxOutputBytes: 8}, NameShell,
		shellConfigJSON(t, `echo '{"a": "0123456789"}'`, map[string]any{"output": "json"}))
	requireRetryable(t, err, "exceeds 8 bytes")
}
