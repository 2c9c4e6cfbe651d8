package procstack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// StopGrace is the usual bound between SIGTERM and SIGKILL in Stop: long
// enough for a service to drain, close its clients and exit 0.
const StopGrace = 30 * time.Second

// Spec says what to run.
type Spec struct {
	// Name is the process's role ("api", "worker-1", "infra"); the log is
	// Dir/Name.log and errors name it.
	Name string
	// Bin is the path of the executable.
	Bin string
	// Dir is the working directory, which holds the log.
	Dir string
	// Args are the arguments after the program name.
	Args []string
	// Env is added to BaseEnv(); for a repeated name the last one wins.
	Env []string
}

// Proc is one supervised OS process. All methods are safe for concurrent
// use; Restart replaces the process, so PID and Err then describe the new
// one.
type Proc struct {
	spec    Spec
	logPath string
	mu      sync.Mutex // serialises Restart
	cur     atomic.Pointer[launch]
}

// launch is one start of the program.
type launch struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
	err  error         // Wait's result, set before done closes
}

// Start starts s.Bin and returns once it runs. Its stdout and stderr are
// appended to Dir/Name.log, after a line "==== start <Name> ====" that
// marks each (re)start.
func Start(s Spec) (*Proc, error) {
	p := &Proc{spec: s, logPath: filepath.Join(s.Dir, s.Name+".log")}
	if err := p.launch(); err != nil {
		return nil, err
	}
	return p, nil
}

// SysProcAttr returns the attributes Start gives every process (on Linux
// a parent-death SIGKILL, so none outlives a crashed stack), for children
// started by other means, such as the redis-server nodes of the bench's
// Redis Cluster.
func SysProcAttr() *syscall.SysProcAttr { return procAttrs() }

// launch starts the program once more.
func (p *Proc) launch() error {
	f, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("start %s: open log: %w", p.spec.Name, err)
	}
	cmd := exec.Command(p.spec.Bin, p.spec.Args...)
	cmd.Dir = p.spec.Dir
	cmd.Env = append(BaseEnv(), p.spec.Env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = procAttrs()
	fmt.Fprintf(f, "==== start %s ====\n", p.spec.Name)
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return fmt.Errorf("start %s (%s): %w", p.spec.Name, p.spec.Bin, err)
	}
	l := &launch{cmd: cmd, done: make(chan struct{})}
	p.cur.Store(l)
	go func() {
		l.err = cmd.Wait()
		_ = f.Close()
		close(l.done)
	}()
	return nil
}

// Restart starts the program again with the same binary, arguments and
// environment, plus env (added to Spec.Env for this start and every later
// one; for a repeated name the last one wins). The previous process must
// have exited (killed or stopped).
func (p *Proc) Restart(env ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.Exited() {
		return fmt.Errorf("restart %s pid=%d: still running", p.spec.Name, p.PID())
	}
	p.spec.Env = append(slices.Clone(p.spec.Env), env...)
	return p.launch()
}

// Name is the process's role, from its Spec.
func (p *Proc) Name() string { return p.spec.Name }

// LogPath is the file that holds the process's output.
func (p *Proc) LogPath() string { return p.logPath }

// PID is the process id of the latest start.
func (p *Proc) PID() int { return p.cur.Load().cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.cur.Load().done:
		return true
	default:
		return false
	}
}

// Err is the process's exit error (nil for status 0, or while it runs).
func (p *Proc) Err() error {
	l := p.cur.Load()
	select {
	case <-l.done:
		return l.err
	default:
		return nil
	}
}

// ExitCode is the exit status once the process has exited by itself; -1
// while it runs, or when a signal ended it.
func (p *Proc) ExitCode() int {
	if !p.Exited() {
		return -1
	}
	var ee *exec.ExitError
	if err := p.Err(); errors.As(err, &ee) {
		return ee.ExitCode()
	} else if err != nil {
		return -1
	}
	return 0
}

// ErrExited describes a process that ended when it should not have, with
// its exit code and error.
func (p *Proc) ErrExited() error {
	return fmt.Errorf("%s pid=%d exited early (code %d): %v", p.spec.Name, p.PID(), p.ExitCode(), p.Err())
}
