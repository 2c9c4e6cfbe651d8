package devstack

import "syscall"

// childAttrs puts a child in its own process group, so the terminal's Ctrl-C
// reaches only braid dev (which then stops the child last, in order), and
// asks the kernel to SIGTERM the child if braid dev dies without cleaning up.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
