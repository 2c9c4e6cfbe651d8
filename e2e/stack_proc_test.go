package e2e

import (
	"syscall"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/procstack"
)

// Bounds on processes of the stack.
const (
	procStopTimeout = procstack.StopGrace // SIGTERM → exit, before SIGKILL
	logTailBytes    = 16 << 10            // how much of a log a failure dump shows
)

// proc is one OS process of a stack, supervised by procstack: output in
// logPath, stopped, killed, signalled and restarted by PID.
type proc struct {
	// name is the process's role ("api", "worker-1"); logPath its log.
	name, logPath string
	p             *procstack.Proc
}

// startProc starts bin with args and exactly env (plus the test's
// environment without BRAID_* variables) in dir, appending its output to
// dir/<name>.log; a failure fails t.
func startProc(t testing.TB, dir, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p, err := procstack.Start(procstack.Spec{Name: name, Bin: bin, Dir: dir, Args: args, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	return newProc(p)
}

// newProc wraps a process procstack started.
func newProc(p *procstack.Proc) *proc { return &proc{name: p.Name(), logPath: p.LogPath(), p: p} }

// restart starts the process again with the same binary, arguments and
// environment plus env (kept for later restarts; the last of a repeated
// name wins), once the previous one has exited (killed or stopped).
func (p *proc) restart(env ...string) error { return p.p.Restart(env...) }

// kill sends SIGKILL to the PID and waits for the exit.
func (p *proc) kill() { p.p.Kill() }

// signal sends sig to the PID (SIGSTOP, SIGCONT...); a process that already
// exited is an error.
func (p *proc) signal(sig syscall.Signal) error { return p.p.Signal(sig) }

// baseEnv is the environment every process inherits: the test's, without
// any BRAID_* variable, so the caller's environment cannot leak in.
func baseEnv() []string { return procstack.BaseEnv() }

// pid is the process id.
func (p *proc) pid() int { return p.p.PID() }

// exited reports whether the process has ended.
func (p *proc) exited() bool { return p.p.Exited() }

// stop sends SIGCONT and SIGTERM to the PID and waits up to bound, then
// SIGKILLs. It returns the exit error (nil for status 0) or a timeout error.
func (p *proc) stop(bound time.Duration) error { return p.p.Stop(bound) }

// wait waits up to bound for the process to exit by itself.
func (p *proc) wait(bound time.Duration) error { return p.p.Wait(bound) }

// log returns everything the process wrote so far.
func (p *proc) log() string { return p.p.Log() }

// tail returns the end of the process's log.
func (p *proc) tail() string { return p.p.Tail(logTailBytes) }

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
func errExited(p *proc) error { return p.p.ErrExited() }
