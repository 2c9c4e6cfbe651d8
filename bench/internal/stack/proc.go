package stack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// logTailBytes is how much of a process log an error shows.
const logTailBytes = 4 << 10

// Proc is one OS process of the stack; its stdout and stderr go to LogPath.
type Proc struct {
	// Name is the role ("api", "orchestrator", "worker-1", "infra").
	Name string
	// LogPath is the file holding the process's output.
	LogPath string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error // Wait's result, set before done closes
}

// startProc starts bin with args and exactly env (plus the caller's
// environment without BRAID_* variables) in dir, logging to dir/<name>.log.
func startProc(dir, name, bin string, env []string, args ...string) (*Proc, error) {
	p := &Proc{Name: name, LogPath: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.LogPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(baseEnv(), env...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.cmd.SysProcAttr = procAttrs()
	if err := p.cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	return p, nil
}

// baseEnv is this process's environment without BRAID_* variables, so the
// caller's settings cannot leak into the stack.
func baseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BRAID_") {
			out = append(out, kv)
		}
	}
	return out
}

// PID is the process id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM to the PID, waits up to bound, then SIGKILLs. It
// returns nil when the process exited (whatever its status) in time.
func (p *Proc) Stop(bound time.Duration) error {
	if !p.Exited() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(bound):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s pid=%d did not exit within %s of SIGTERM; killed", p.Name, p.PID(), bound)
	}
}

// Log returns everything the process wrote so far.
func (p *Proc) Log() string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// Tail returns the end of the process's log.
func (p *Proc) Tail() string {
	s := p.Log()
	if len(s) > logTailBytes {
		s = "...\n" + s[len(s)-logTailBytes:]
	}
	return s
}

// errExited describes a process that ended too early, with its log tail.
func errExited(p *Proc) error {
	return errors.New(p.Name + " exited early: " + fmt.Sprint(p.err) + "\n" + p.Tail())
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
