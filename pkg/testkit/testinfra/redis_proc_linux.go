//go:build linux

package testinfra

import "syscall"

// redisAttrs makes redis-server die with the test binary: a test process
// killed outright (a timeout, kill -9) would otherwise leave its Redis
// running with no one to stop it.
func redisAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
