package handler

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReapOrphansKillsOnlyItsWorkersLeftovers: the processes a killed
// worker's shell tasks left (found by their BRAID_TASK_WORKER) die with
// their process group; another worker's and plain processes live on.
func TestReapOrphansKillsOnlyItsWorkersLeftovers(t *testing.T) {
	t.Parallel()
	id := "reap-" + t.Name()
	start := func(worker string) *exec.Cmd {
		// A shell that started a background child, as a task would.
		cmd := exec.Command("/bin/sh", "-c", "sleep 60 & wait")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if worker != "" {
			cmd.Env = []string{WorkerEnv + "=" + worker, "PATH=/usr/bin:/bin"}
		}
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
		return cmd
	}
	ghost, other, plain := start(id), start(id+"-other"), start("")
	require.Eventually(t, func() bool { return groupSize(ghost.Process.Pid) == 2 }, 5*time.Second, 10*time.Millisecond)
	n, err := ReapOrphans(id)
	require.NoError(t, err)
	require.Equal(t, 1, n, "one process group: the shell and its background child")
	require.Eventually(t, func() bool { return groupSize(ghost.Process.Pid) == 0 }, 5*time.Second, 10*time.Millisecond)
	require.Positive(t, groupSize(other.Process.Pid), "another worker's task was killed")
	require.Positive(t, groupSize(plain.Process.Pid), "a process that is no task was killed")
	n, err = ReapOrphans("")
	require.NoError(t, err)
	require.Zero(t, n, "no stable id: nothing to reap")
}

// groupSize counts the live (not zombie) processes of process group pgid,
// from /proc/PID/stat (fields after the command: state, ppid, pgrp).
func groupSize(pgid int) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	n := 0
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			n++
		}
	}
	return n
}
