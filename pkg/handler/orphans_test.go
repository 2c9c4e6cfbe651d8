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
	start := func(worker string, script string) *exec.Cmd {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if worker != "" {
			cmd.Env = []string{WorkerEnv + "=" + worker, "PATH=/usr/bin:/bin"}
		}
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _, _ = cmd.Process.Wait() })
		return cmd
	}
	// A ghost: its shell died (as with its worker), its child lives on.
	ghost := start(id, "sleep 60 & exit 0")
	require.NoError(t, ghost.Wait())
	// A live task under the same id (another cluster, a parallel test), a
	// ghost of another worker, and a process that is no task.
	live, other, plain := start(id, "sleep 60 & wait"), start(id+"-other", "sleep 60 & exit 0"), start("", "sleep 60 & exit 0")
	require.NoError(t, other.Wait())
	require.NoError(t, plain.Wait())
	require.Eventually(t, func() bool { return groupSize(ghost.Process.Pid) == 1 && groupSize(live.Process.Pid) == 2 }, 5*time.Second, 10*time.Millisecond)
	n, err := ReapOrphans(id)
	require.NoError(t, err)
	require.Equal(t, 1, n, "one process group: the ghost's")
	require.Eventually(t, func() bool { return groupSize(ghost.Process.Pid) == 0 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, 2, groupSize(live.Process.Pid), "a live task with a shell was killed")
	require.Positive(t, groupSize(other.Process.Pid), "another worker's ghost was killed")
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
