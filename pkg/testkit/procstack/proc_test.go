package procstack

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Bounds of the tests: generous liveness bounds, never pass/fail timings.
const (
	testBound = 10 * time.Second
	testPoll  = 10 * time.Millisecond
)

// startSh runs `sh -c script` as a process named name in a fresh dir and
// kills it when the test ends.
func startSh(t *testing.T, name, script string, env ...string) *Proc {
	t.Helper()
	p, err := Start(Spec{Name: name, Bin: "/bin/sh", Dir: t.TempDir(), Args: []string{"-c", script}, Env: env})
	require.NoError(t, err)
	t.Cleanup(p.Kill)
	return p
}

func TestStartWaitExitCode(t *testing.T) {
	t.Parallel()
	p := startSh(t, "three", "echo out; echo err >&2; exit 3")
	err := p.Wait(testBound)
	require.Error(t, err)
	require.True(t, p.Exited())
	require.Equal(t, 3, p.ExitCode())
	require.Equal(t, err, p.Err())
	require.ErrorContains(t, p.ErrExited(), "three pid=")
	require.ErrorContains(t, p.ErrExited(), "(code 3)")
	require.Equal(t, "==== start three ====\nout\nerr\n", p.Log())
	require.Equal(t, "three", p.Name())
	require.True(t, strings.HasSuffix(p.LogPath(), "/three.log"), p.LogPath())

	ok := startSh(t, "zero", "exit 0")
	require.NoError(t, ok.Wait(testBound))
	require.Equal(t, 0, ok.ExitCode())
}

func TestStartMissingBinary(t *testing.T) {
	t.Parallel()
	_, err := Start(Spec{Name: "ghost", Bin: "/nonexistent/ghost", Dir: t.TempDir()})
	require.ErrorContains(t, err, "start ghost (/nonexistent/ghost)")
	_, err = Start(Spec{Name: "nodir", Bin: "/bin/sh", Dir: "/nonexistent/dir"})
	require.ErrorContains(t, err, "start nodir: open log")
}

func TestRunningProcess(t *testing.T) {
	t.Parallel()
	p := startSh(t, "sleeper", "exec sleep 60")
	require.False(t, p.Exited())
	require.Equal(t, -1, p.ExitCode())
	require.NoError(t, p.Err())
	require.ErrorContains(t, p.Wait(50*time.Millisecond), "still running")
	require.ErrorContains(t, p.Restart(), "still running")
}

func TestStopCleanExit(t *testing.T) {
	t.Parallel()
	// The trap exits 0 on SIGTERM, as the services do after draining.
	p := startSh(t, "clean", `trap 'kill $!; exit 0' TERM; echo ready; sleep 60 & wait`)
	waitLog(t, p, "ready")
	require.NoError(t, p.Stop(testBound))
	require.Equal(t, 0, p.ExitCode())
	require.NoError(t, p.Stop(testBound), "stopping twice returns the same exit")
}

func TestStopReportsSignalExit(t *testing.T) {
	t.Parallel()
	p := startSh(t, "plain", "exec sleep 60")
	require.ErrorContains(t, p.Stop(testBound), "terminated")
	require.Equal(t, -1, p.ExitCode())
}

func TestStopKillsAfterGrace(t *testing.T) {
	t.Parallel()
	// An ignored SIGTERM stays ignored across exec.
	p := startSh(t, "stubborn", `trap '' TERM; echo ready; exec sleep 60`)
	waitLog(t, p, "ready")
	err := p.Stop(100 * time.Millisecond)
	require.ErrorContains(t, err, "did not exit within 100ms of SIGTERM; killed")
	require.True(t, p.Exited())
}

func TestKillAndRestart(t *testing.T) {
	t.Parallel()
	p := startSh(t, "phoenix", "echo up $BRAID_X; exec sleep 60", "BRAID_X=kept")
	waitLog(t, p, "up kept")
	first := p.PID()
	p.Kill()
	require.True(t, p.Exited())
	require.ErrorContains(t, p.Err(), "killed")
	require.ErrorContains(t, p.Signal(syscall.SIGCONT), "exited")

	require.NoError(t, p.Restart())
	require.False(t, p.Exited())
	require.NotEqual(t, first, p.PID())
	require.NoError(t, p.Err(), "the new process has not exited")
	require.NoError(t, Poll(testBound, testPoll, func() (bool, error) {
		return strings.Count(p.Log(), "up kept") == 2, nil
	}), "the restart reuses the environment; log:\n%s", p.Log())
	require.Equal(t, 2, strings.Count(p.Log(), "==== start phoenix ===="))
	p.Kill()
	p.Kill() // a second Kill of an exited process returns at once

	require.NoError(t, p.Restart("BRAID_X=changed"))
	waitLog(t, p, "up changed")
	p.Kill()
	require.NoError(t, p.Restart())
	require.NoError(t, Poll(testBound, testPoll, func() (bool, error) {
		return strings.Count(p.Log(), "up changed") == 2, nil
	}), "an environment given to a restart is kept by later ones; log:\n%s", p.Log())
	p.Kill()
}

func TestSignalStopContinue(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("reads the process state from /proc")
	}
	p := startSh(t, "paused", "exec sleep 60")
	require.NoError(t, p.Signal(syscall.SIGSTOP))
	waitState(t, p, "T")
	require.NoError(t, p.Signal(syscall.SIGCONT))
	waitState(t, p, "S")
	// Stop continues a stopped process so that it can handle SIGTERM.
	require.NoError(t, p.Signal(syscall.SIGSTOP))
	waitState(t, p, "T")
	require.ErrorContains(t, p.Stop(testBound), "terminated")
}

func TestBaseEnvDropsBraidVariables(t *testing.T) {
	t.Setenv("BRAID_LEAK", "caller")
	t.Setenv("PROCSTACK_KEEP", "yes")
	p := startSh(t, "env", "env", "BRAID_GIVEN=1")
	require.NoError(t, p.Wait(testBound))
	log := p.Log()
	require.Contains(t, log, "BRAID_GIVEN=1")
	require.Contains(t, log, "PROCSTACK_KEEP=yes")
	require.NotContains(t, log, "BRAID_LEAK")
}

func TestTail(t *testing.T) {
	t.Parallel()
	p := startSh(t, "long", "printf '%0100d' 0; printf END")
	require.NoError(t, p.Wait(testBound))
	require.Equal(t, "...\n00END", p.Tail(5))
	require.Equal(t, p.Log(), p.Tail(1<<20))
}

// waitLog waits until p's log holds s.
func waitLog(t *testing.T, p *Proc, s string) {
	t.Helper()
	require.NoError(t, Poll(testBound, testPoll, func() (bool, error) {
		if p.Exited() {
			return false, p.ErrExited()
		}
		return strings.Contains(p.Log(), s), nil
	}), "%s never logged %q", p.Name(), s)
}

// waitState waits until /proc/PID/stat shows state (T stopped, S sleeping).
func waitState(t *testing.T, p *Proc, state string) {
	t.Helper()
	var last string
	err := Poll(testBound, testPoll, func() (bool, error) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID()))
		if err != nil {
			return false, err
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		last = f[0]
		return last == state, nil
	})
	require.NoError(t, err, "pid %d state %s, want %s", p.PID(), last, state)
}
