package handler

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// WorkerEnv is the variable every shell task gets with the id of the worker
// that runs it; ReapOrphans finds a killed worker's leftovers by it. It is
// not a configuration variable, so no process but a task carries it.
const WorkerEnv = "BRAID_TASK_WORKER"

// ReapOrphans kills, with their process groups, the processes that shell
// tasks of an earlier process running as worker id left behind: a worker
// killed with SIGKILL takes its shells with it (Pdeathsig), but not what
// they started. Call it when a worker with a stable id starts, before it
// runs anything, so that a re-run of an interrupted task never races its
// own ghost. It reads /proc (Linux; elsewhere it does nothing) and returns
// how many process groups it killed. Only groups whose shell is gone are
// touched, so a live task of another worker with the same id (another
// cluster on the host, parallel tests) is safe. It counts process groups (a leftover in the caller's own group
// is killed alone and counts as one). A process that cleared its
// environment escapes it.
func ReapOrphans(id string) (int, error) {
	if id == "" {
		return 0, nil
	}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil || len(dirs) == 0 {
		return 0, err
	}
	want := []byte(WorkerEnv + "=" + id + "\x00")
	self, own := os.Getpid(), syscall.Getpgrp()
	groups := map[int]bool{}
	killed := 0
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !hasEnv(env, want) {
			continue
		}
		pgid, err := syscall.Getpgid(pid)
		switch {
		case err != nil: // gone meanwhile
		case leaderAlive(pgid): // a live task (of a worker with the same id elsewhere)
		case pgid == own:
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		case !groups[pgid]:
			groups[pgid] = true
			if syscall.Kill(-pgid, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	return killed, nil
}

// leaderAlive reports whether process group pgid still has its leader (a
// task's shell) alive: only a group whose shell died with its worker is a
// ghost. A zombie leader counts as dead.
func leaderAlive(pgid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pgid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := bytes.Fields([]byte(s[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 2 && string(f[0]) != "Z" && string(f[2]) == strconv.Itoa(pgid)
}

// hasEnv reports whether the NUL-separated environment env holds the
// entry want (NUL-terminated).
func hasEnv(env, want []byte) bool {
	return bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...))
}
