//go:build !linux

package testinfra

import "syscall"

// redisAttrs has nothing to add where there is no parent-death signal.
func redisAttrs() *syscall.SysProcAttr { return nil }
