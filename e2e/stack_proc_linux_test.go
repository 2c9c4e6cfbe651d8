package e2e

import "syscall"

// procAttrs makes the kernel kill a stack process if the test binary dies
// without cleaning up (a panic or a -timeout), so none is left behind.
func procAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
