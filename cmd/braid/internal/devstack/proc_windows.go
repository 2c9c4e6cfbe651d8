package devstack

import "syscall"

// childAttrs has nothing to set on Windows.
func childAttrs() *syscall.SysProcAttr { return nil }
