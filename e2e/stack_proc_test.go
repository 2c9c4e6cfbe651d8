package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bounds on processes of the stack.
const (
	procStopTimeout = 30 * time.Second // SIGTERM → exit, before SIGKILL
	logTailBytes    = 16 << 10         // how much of a log a failure dump shows
)

// proc is one OS process of a stack; its stdout and stderr go to logPath.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // Wait's result, set before done closes
}

// startProc starts bin with args and exactly env (plus PATH and HOME) in
// dir, writing its output to dir/<name>.log.
func startProc(t testing.TB, dir, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, logPath: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.logPath)
	if err != nil {
		t.Fatalf("create %s: %v", p.logPath, err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(baseEnv(), env...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.cmd.SysProcAttr = procAttrs()
	if err := p.cmd.Start(); err != nil {
		_ = f.Close()
		t.Fatalf("start %s (%s): %v", name, bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	return p
}

// baseEnv is the environment every process inherits: the test's, without
// any BRAID_* variable, so the caller's environment cannot leak in.
func baseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BRAID_") {
			out = append(out, kv)
		}
	}
	return out
}

// pid is the process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the PID and waits up to bound, then SIGKILLs. It
// returns the exit error (nil for status 0) or a timeout error.
func (p *proc) stop(bound time.Duration) error {
	if !p.exited() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.done:
		return p.err
	case <-time.After(bound):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s pid=%d did not exit within %s of SIGTERM; killed", p.name, p.pid(), bound)
	}
}

// wait waits up to bound for the process to exit by itself.
func (p *proc) wait(bound time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(bound):
		return fmt.Errorf("%s pid=%d still running after %s", p.name, p.pid(), bound)
	}
}

// exitCode is the process's exit status once it has exited, else -1.
func (p *proc) exitCode() int {
	if !p.exited() {
		return -1
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		return -1
	}
	return 0
}

// log returns everything the process wrote so far.
func (p *proc) log() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// tail returns the end of the process's log.
func (p *proc) tail() string {
	s := p.log()
	if len(s) > logTailBytes {
		s = "...\n" + s[len(s)-logTailBytes:]
	}
	return s
}

// dumpLogs logs each process's output tail when t failed.
func dumpLogs(t testing.TB, procs ...*proc) {
	if !t.Failed() {
		return
	}
	for _, p := range procs {
		t.Logf("==== %s (pid %d, exited %v) log %s ====\n%s", p.name, p.pid(), p.exited(), p.logPath, p.tail())
	}
}

// errExited describes a process that ended too early.
func errExited(p *proc) error {
	return fmt.Errorf("%s exited early (code %d): %v", p.name, p.exitCode(), p.err)
}
