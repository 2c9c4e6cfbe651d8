package stack

import "syscall"

// procAttrs makes the kernel kill a stack process if the bench dies
// without cleaning up, so none is left behind.
func procAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
