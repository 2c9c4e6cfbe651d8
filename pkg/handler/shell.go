package handler

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/worker"
)

// Shell output modes.
const (
	shellOutputText  = "text"
	shellOutputJSON  = "json"
	shellOutputLines = "lines"
)

// shellConfig is the shell handler's node config.
type shellConfig struct {
	Command string    // required; run as `<shell> -c Command`
	Env     scalarMap // added to the worker's environment
	Workdir string    // working directory; empty: the worker's
	Output  string    // "text" (default), "json" or "lines"
	Shell   string    // shell path; empty: Config.ShellPath
}

func decodeShellConfig(raw []byte) (shellConfig, error) {
	o, err := parseObject(raw)
	if err != nil {
		return shellConfig{}, err
	}
	var c shellConfig
	err = o.getAll(field{"command", &c.Command}, field{"env", &c.Env},
		field{"workdir", &c.Workdir}, field{"output", &c.Output}, field{"shell", &c.Shell})
	if err != nil {
		return shellConfig{}, err
	}
	return c, c.validate()
}

func (c *shellConfig) validate() error {
	if strings.TrimSpace(c.Command) == "" {
		return fmt.Errorf("config field %q is required", "command")
	}
	c.Output = strings.ToLower(c.Output)
	switch c.Output {
	case "":
		c.Output = shellOutputText
	case shellOutputText, shellOutputJSON, shellOutputLines:
	default:
		return fmt.Errorf("config field %q: want text, json or lines, got %q", "output", c.Output)
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("config field %q: invalid variable name %q", "env", k)
		}
	}
	return nil
}

// shellHandler runs a shell command in its own process group.
type shellHandler struct{ cfg Config }

// Handle runs the command and returns {exit_code, stdout, stderr} plus the
// parsed output. A non-zero exit returns the output together with a
// retryable error "shell: exit code N: <last stderr line>".
func (h *shellHandler) Handle(ctx context.Context, task *worker.Task) (any, error) {
	c, err := decodeShellConfig(task.Config)
	if err != nil {
		return nil, configError("shell", err)
	}
	start := time.Now()
	res, err := h.run(ctx, task, c)
	if err != nil {
		return nil, err
	}
	out := res.output()
	switch {
	case res.exitCode != 0 && ctx.Err() != nil:
		return out, ctxError(ctx, "shell", start)
	case res.exitCode != 0:
		return out, res.exitError()
	}
	return res.parse(out, c.Output)
}
