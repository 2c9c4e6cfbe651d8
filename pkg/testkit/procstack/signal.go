package procstack

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// Signal sends sig (SIGSTOP, SIGCONT, SIGTERM...) to the PID. A process
// that already exited is an error.
func (p *Proc) Signal(sig os.Signal) error {
	l := p.cur.Load()
	if p.Exited() {
		return fmt.Errorf("signal %s to %s pid=%d: exited", sig, p.spec.Name, l.cmd.Process.Pid)
	}
	if err := l.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %s to %s pid=%d: %w", sig, p.spec.Name, l.cmd.Process.Pid, err)
	}
	return nil
}

// Kill sends SIGKILL to the PID (unless it exited) and waits for the exit.
func (p *Proc) Kill() {
	l := p.cur.Load()
	if !p.Exited() {
		_ = l.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-l.done
}

// Stop sends SIGCONT (a stopped process cannot handle SIGTERM) and SIGTERM
// to the PID, waits up to grace, then SIGKILLs. It returns the exit error
// (nil for status 0, also when the process had exited before), or an error
// saying the process had to be killed.
func (p *Proc) Stop(grace time.Duration) error {
	l := p.cur.Load()
	if !p.Exited() {
		_ = l.cmd.Process.Signal(syscall.SIGCONT)
		_ = l.cmd.Process.Signal(syscall.SIGTERM)
	}
	if exitedWithin(l, grace) {
		return l.err
	}
	_ = l.cmd.Process.Kill()
	<-l.done
	return fmt.Errorf("%s pid=%d did not exit within %s of SIGTERM; killed", p.spec.Name, l.cmd.Process.Pid, grace)
}

// Wait waits up to bound for the process to exit by itself and returns
// its exit error (nil for status 0); it does not signal it.
func (p *Proc) Wait(bound time.Duration) error {
	l := p.cur.Load()
	if exitedWithin(l, bound) {
		return l.err
	}
	return fmt.Errorf("%s pid=%d still running after %s", p.spec.Name, l.cmd.Process.Pid, bound)
}

// exitedWithin waits up to bound for l's process to exit and reports
// whether it did.
func exitedWithin(l *launch, bound time.Duration) bool {
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-l.done:
		return true
	case <-t.C:
		return false
	}
}
