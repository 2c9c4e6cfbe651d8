//go:build !linux

package e2e

import "syscall"

// procAttrs sets nothing outside Linux.
func procAttrs() *syscall.SysProcAttr { return nil }
