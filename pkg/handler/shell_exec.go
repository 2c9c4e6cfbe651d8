package handler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/braidhq/braid/pkg/tracing"
	"github.com/braidhq/braid/pkg/worker"
)

// shellWaitDelay bounds how long the handler waits, after the shell exited
// and its process group was killed, for the output pipes to drain (a child
// that left the group with setsid may still hold them). It is also the
// exec.Cmd.WaitDelay after ctx ends.
const shellWaitDelay = time.Second

// shellResult is what a finished shell command left behind.
type shellResult struct {
	exitCode int
	stdout   *lineWriter
	stderr   *lineWriter
}

// run starts the command in a new process group, streams its output to the
// task log, waits for it, kills whatever is left of the group, then drains
// the output. Only a failure to start is returned as an error.
func (h *shellHandler) run(ctx context.Context, task *worker.Task, c shellConfig) (*shellResult, error) {
	res := &shellResult{
		stdout: newLineWriter("stdout", task.Log, h.cfg.MaxOutputBytes),
		stderr: newLineWriter("stderr", task.Log, h.cfg.MaxOutputBytes),
	}
	cmd := h.command(ctx, task, c)
	pipes, err := newOutputPipes(cmd)
	if err != nil {
		return nil, fmt.Errorf("shell: pipes: %w", err)
	}
	if err := cmd.Start(); err != nil {
		pipes.close()
		return nil, startError(ctx, err)
	}
	drained := pipes.drain(res.stdout, res.stderr)
	_ = cmd.Wait() // the outcome is in ProcessState
	// Background children must not outlive the attempt; killing them right
	// away also closes the pipes they hold, so draining ends at once.
	killGroup(cmd.Process.Pid)
	pipes.await(drained, shellWaitDelay)
	res.stdout.Flush()
	res.stderr.Flush()
	res.exitCode = cmd.ProcessState.ExitCode()
	return res, nil
}

// command builds `<shell> -c command` in its own process group; cancelling
// ctx kills the whole group.
func (h *shellHandler) command(ctx context.Context, task *worker.Task, c shellConfig) *exec.Cmd {
	shell := c.Shell
	if shell == "" {
		shell = h.cfg.ShellPath
	}
	cmd := exec.CommandContext(ctx, shell, "-c", c.Command)
	// Pdeathsig: the shell dies with the worker (kill -9 included); what it
	// started is reaped by the worker's next start (ReapOrphans).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		killGroup(cmd.Process.Pid)
		return nil
	}
	cmd.WaitDelay = shellWaitDelay
	cmd.Dir = c.Workdir
	cmd.Env = h.environ(task, c.Env, tracing.Traceparent(ctx))
	return cmd
}

// killGroup sends SIGKILL to process group pgid; a group already gone is fine.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// environ is a task's environment: the few variables every program expects
// (BaseEnv) and those the operator passes on (Config.PassEnv) from the
// worker's environment, then the BRAID_* task variables, then the config's
// env (later entries win). While tracing is on, TRACEPARENT (the W3C
// environment carrier) holds the attempt's execute span, so a traced
// program continues the run's trace. Nothing else of the worker's environment — its
// Redis URL, API keys, cloud credentials — reaches a task.
func (h *shellHandler) environ(task *worker.Task, extra scalarMap, traceparent string) []string {
	base := os.Environ()
	env := make([]string, 0, len(BaseEnv)+len(h.cfg.PassEnv)+5+len(extra))
	hasPath := false
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		if !h.passes(k) || (h.cfg.LLMAPIKey != "" && v == h.cfg.LLMAPIKey) {
			continue
		}
		hasPath = hasPath || k == "PATH"
		env = append(env, kv)
	}
	if !hasPath {
		env = append(env, "PATH="+DefaultPath)
	}
	env = append(env,
		"BRAID_RUN_ID="+task.RunID,
		"BRAID_NODE_ID="+task.NodeID,
		"BRAID_ATTEMPT="+strconv.Itoa(task.Attempt),
		"BRAID_IDEMPOTENCY_KEY="+task.IdempotencyKey,
		WorkerEnv+"="+task.WorkerID,
	)
	if traceparent != "" {
		env = append(env, "TRACEPARENT="+traceparent)
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// passes reports whether the worker's variable k goes to tasks.
func (h *shellHandler) passes(k string) bool {
	return slices.Contains(BaseEnv, k) || matchEnv(h.cfg.PassEnv, k)
}

// matchEnv reports whether k is one of names, or starts with the prefix of
// a name ending in "*".
func matchEnv(names []string, k string) bool {
	for _, n := range names {
		if p, ok := strings.CutSuffix(n, "*"); ok && strings.HasPrefix(k, p) || n == k {
			return true
		}
	}
	return false
}

// startError classifies a failure to start: a done ctx or a transient lack
// of resources is retryable; a missing shell or workdir is permanent.
func startError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("shell: start: %w", ctx.Err())
	}
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOMEM) {
		return fmt.Errorf("shell: start: %w", err)
	}
	return worker.Permanent(fmt.Errorf("shell: start: %w", err))
}
