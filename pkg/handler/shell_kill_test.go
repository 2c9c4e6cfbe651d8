package handler

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readPids returns the pids written one per line to path, or nil until
// there are want of them.
func readPids(path string, want int) []int {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	if len(pids) < want {
		return nil
	}
	return pids
}

// killLeftovers ends, by pid, processes a failing test left running.
func killLeftovers(t *testing.T, pidFile string) {
	t.Cleanup(func() {
		for _, pid := range readPids(pidFile, 1) {
			if alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// alive reports whether pid is a live process; an unreaped zombie is dead.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// Format: pid (comm) state ...; comm may hold spaces, so cut at the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// manualContext is a context whose end the test triggers, with the error of
// its choice: it makes a deadline expire at an exact moment without sleeping.
type manualContext struct {
	context.Context
	done chan struct{}
	err  error
	once sync.Once
}

func newManualContext() *manualContext {
	return &manualContext{Context: context.Background(), done: make(chan struct{})}
}

func (m *manualContext) Done() <-chan struct{} { return m.done }

func (m *manualContext) Err() error {
	select {
	case <-m.done:
		return m.err
	default:
		return nil
	}
}

// end makes the context done with err (context.Canceled or DeadlineExceeded).
func (m *manualContext) end(err error) {
	m.once.Do(func() {
		m.err = err
		close(m.done)
	})
}

func TestShellCancelKillsProcessGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		end     error
		wantErr string
	}{
		{name: "cancel", end: context.Canceled, wantErr: "shell: cancelled after"},
		{name: "deadline", end: context.DeadlineExceeded, wantErr: "shell: timed out after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pids")
			killLeftovers(t, pidFile)
			// Two background children plus the shell itself, all in one group.
			command := `sleep 300 & echo $! >> "$PIDS"; sleep 300 & echo $! >> "$PIDS"; echo $$ >> "$PIDS"; wait`
			task, _ := newTask(t, shellConfigJSON(t, command, map[string]any{"env": map[string]string{"PIDS": pidFile}}))
			ctx := newManualContext()
			defer ctx.end(context.Canceled)
			type result struct {
				out any
				err error
			}
			done := make(chan result, 1)
			go func() {
				out, err := Builtins(Config{})[NameShell].Handle(ctx, task)
				done <- result{out, err}
			}()

			var pids []int
			require.Eventually(t, func() bool { pids = readPids(pidFile, 3); return pids != nil },
				10*time.Second, 5*time.Millisecond, "children did not start")
			for _, pid := range pids {
				require.True(t, alive(pid), "pid %d should be running", pid)
			}
			ctx.end(tt.end)

			select {
			case r := <-done:
				requireRetryable(t, r.err, tt.wantErr)
				require.ErrorIs(t, r.err, tt.end)
				require.Equal(t, -1.0, asMap(t, r.out)["exit_code"], "killed by a signal")
			case <-time.After(5 * time.Second):
				t.Fatal("Handle did not return after the context ended: something holds the pipes")
			}
			require.Eventually(t, func() bool {
				for _, pid := range pids {
					if alive(pid) {
						return false
					}
				}
				return true
			}, 2*time.Second, 10*time.Millisecond, "process group %v survived", pids)
		})
	}
}

func TestShellKillsBackgroundChildrenAfterExit(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	killLeftovers(t, pidFile)
	// The shell exits at once, leaving a child that holds stdout open.
	command := `sleep 300 & echo $! > "$PIDS"; echo started`
	out, _, err := handle(t, Config{}, NameShell, shellConfigJSON(t, command, map[string]any{"env": map[string]string{"PIDS": pidFile}}))
	require.NoError(t, err)
	require.Equal(t, "started", asMap(t, out)["result"])
	pids := readPids(pidFile, 1)
	require.Len(t, pids, 1)
	require.Eventually(t, func() bool { return !alive(pids[0]) }, 2*time.Second, 10*time.Millisecond)
}

func TestShellReturnsWhenEscapedChildHoldsPipes(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	killLeftovers(t, pidFile) // the escaped child survives by design
	// setsid moves the child out of the process group, beyond killGroup's
	// reach; it keeps stdout open, so only the drain grace period ends the wait.
	// The shell waits (bounded) until the escaped child has written its pid.
	command := `setsid sh -c 'echo $$ > "$PIDS"; exec sleep 60' & i=0; ` +
		`while [ ! -s "$PIDS" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; echo started`
	task, _ := newTask(t, shellConfigJSON(t, command, map[string]any{"env": map[string]string{"PIDS": pidFile}}))
	done := make(chan error, 1)
	go func() {
		_, err := Builtins(Config{})[NameShell].Handle(context.Background(), task)
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("Handle blocked on a pipe held by an escaped child")
	}
	pids := readPids(pidFile, 1)
	require.Len(t, pids, 1)
	require.True(t, alive(pids[0]), "the escaped child outlives the group kill, so the grace period was exercised")
}
