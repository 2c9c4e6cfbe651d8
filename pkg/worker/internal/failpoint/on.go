//go:build failpoints

package failpoint

import (
	"log/slog"
	"os"
	"syscall"

	"github.com/braidhq/braid/pkg/logkey"
)

// Enabled is true: this binary was built with the failpoints tag.
const Enabled = true

// kill ends the process as kill -9 would (a variable for the package's test).
var kill = func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }

// ExitAfterResult kills the process when EnvExitAfterResult names node, the
// node whose final result of run the broker has just acknowledged. It logs
// "failpoint: exiting after a result" first.
func ExitAfterResult(log *slog.Logger, run, node string) {
	if want := os.Getenv(EnvExitAfterResult); want == "" || want != node {
		return
	}
	log.Warn("failpoint: exiting after a result", logkey.RunID, run, logkey.NodeID, node)
	kill()
}
