//go:build failpoints

package failpoint

import (
	"log/slog"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
)

// Enabled is true: this binary was built with the failpoints tag.
const Enabled = true

// Bounds of a held write: it is released once the process's own clock
// jumped by pauseGap between two ticks (it was stopped and continued), or
// after maxHold when nobody stopped it (a variable for the package's test).
const (
	tick     = 100 * time.Millisecond
	pauseGap = 2 * time.Second
)

var maxHold = 30 * time.Second

// held is set by the one write HoldWrite holds in this process.
var held atomic.Bool

// HoldWrite holds the caller, once per process, before it persists a write
// of run when EnvHoldWrite names run or is "first". It logs "failpoint:
// holding a write" with the run's id, so that a test can SIGSTOP the
// process then, and returns once the process was stopped and continued (or
// after maxHold): the write goes on with whatever fence it held before the
// pause. It reports whether it held.
func HoldWrite(log *slog.Logger, run string) bool {
	want := os.Getenv(EnvHoldWrite)
	if want == "" || want != "first" && want != run || !held.CompareAndSwap(false, true) {
		return false
	}
	log.Warn("failpoint: holding a write", logkey.RunID, run, logkey.MaxHold, maxHold)
	paused := waitPaused()
	log.Warn("failpoint: releasing the write", logkey.RunID, run, logkey.Paused, paused)
	return true
}

// waitPaused waits until the clock jumps by pauseGap between two ticks or
// maxHold passes; it returns the jump (0 when there was none).
func waitPaused() time.Duration {
	t := time.NewTicker(tick)
	defer t.Stop()
	start, last := time.Now(), time.Now()
	for range t.C {
		now := time.Now()
		if gap := now.Sub(last); gap >= pauseGap {
			return gap
		}
		if now.Sub(start) >= maxHold {
			return 0
		}
		last = now
	}
	return 0
}

// kill ends the process as kill -9 would (a variable for the package's test).
var kill = func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }

// ExitAfterWrite kills the process when EnvExitAfterWrite names node, the
// node whose finished result the caller has just stored for run: nothing
// after the write happens (no publish, no commit, no lock release). It
// logs "failpoint: exiting after a write" first.
func ExitAfterWrite(log *slog.Logger, run, node string) {
	if want := os.Getenv(EnvExitAfterWrite); want == "" || want != node {
		return
	}
	log.Warn("failpoint: exiting after a write", logkey.RunID, run, logkey.NodeID, node)
	kill()
}
