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

	// bin, args, env and dir are what restart starts again.
	bin, dir  string
	args, env []string
}

// startProc starts bin with args and exactly env (plus PATH and HOME) in
// dir, writing its output to dir/<name>.log.
func startProc(t testing.TB, dir, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, logPath: filepath.Join(dir, name+".log"), bin: bin, dir: dir, args: args, env: env}
	if err := p.launch(); err != nil {
		t.Fatal(err)
	}
	return p
}

// launch starts the process, appending its output to logPath.
func (p *proc) launch() error {
	f, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", p.logPath, err)
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Dir = p.dir
	cmd.Env = append(baseEnv(), p.env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = procAttrs()
	fmt.Fprintf(f, "==== start %s ====\n", p.name)
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return fmt.Errorf("start %s (%s): %w", p.name, p.bin, err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.err = cmd, done, nil
	go func() {
		p.err = cmd.Wait()
		_ = f.Close()
		close(done)
	}()
	return nil
}

// restart starts the process again with the same binary, arguments and
// environment, once the previous one has exited (killed or stopped).
func (p *proc) restart() error {
	if !p.exited() {
		return fmt.Errorf("restart %s pid=%d: still running", p.name, p.pid())
	}
	return p.launch()
}

// kill sends SIGKILL to the PID and waits for the exit.
func (p *proc) kill() {
	if !p.exited() {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.done
}

// signal sends sig to the PID (SIGSTOP, SIGCONT...); a process that already
// exited is an error.
func (p *proc) signal(sig syscall.Signal) error {
	if p.exited() {
		return fmt.Errorf("signal %s to %s: exited", sig, p.name)
	}
	return p.cmd.Process.Signal(sig)
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

// stop sends SIGCONT and SIGTERM to the PID and waits up to bound, then SIGKILLs. It
// returns the exit error (nil for status 0) or a timeout error.
func (p *proc) stop(bound time.Duration) error {
	if !p.exited() {
		_ = p.cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot handle SIGTERM
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
