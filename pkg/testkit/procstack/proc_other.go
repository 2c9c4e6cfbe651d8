//go:build !linux

package procstack

import "syscall"

// procAttrs has no parent-death signal outside Linux.
func procAttrs() *syscall.SysProcAttr { return nil }
