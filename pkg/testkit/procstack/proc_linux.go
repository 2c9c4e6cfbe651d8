package procstack

import "syscall"

// procAttrs makes the kernel SIGKILL a stack process when the thread that
// started it dies (a panic, a test -timeout, a crashed bench), so none is
// left behind.
func procAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
