package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/braidhq/braid/pkg/procstack"
)

// binaries are the programs the process stack runs, built once per test
// binary into a temporary directory that TestMain removes.
type binaries struct {
	API, Orchestrator, Worker, Braid string
	// KfakeBroker runs the broker alone, for the fault suite.
	KfakeBroker string
}

var (
	buildOnce sync.Once
	builtBins binaries
	buildErr  error
	binDir    string
)

// repoRoot is the repository root, where go.work is.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatalf("repo root: %v", err)
	}
	return root
}

// bins builds api, orchestrator, worker, braid and kfakebroker with the workspace (once)
// and returns their paths; a build failure fails every caller.
func bins(t testing.TB) binaries {
	t.Helper()
	root := repoRoot(t)
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "braid-e2e-bin-")
		if buildErr != nil {
			return
		}
		var b procstack.Binaries
		b, buildErr = procstack.Build(context.Background(), root, binDir, "./e2e/internal/cmd/kfakebroker")
		if buildErr != nil {
			return
		}
		builtBins = binaries{API: b.API, Orchestrator: b.Orchestrator, Worker: b.Worker, Braid: b.Braid,
			KfakeBroker: filepath.Join(binDir, "kfakebroker")}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBins
}

// Failpoint builds: built on first use only, beside the others.
var (
	failpointOnce sync.Once
	failpointOrch string
	failpointErr  error
)

// failpointOrchestrator builds the orchestrator with the failpoints build
// tag (services/orchestrator/internal/failpoint), once, and returns its
// path. Only the tests that inject a failpoint run it; every other test
// runs the normal build, which has no failpoint code.
func failpointOrchestrator(t testing.TB) string {
	t.Helper()
	root, dir := repoRoot(t), filepath.Dir(bins(t).Orchestrator)
	failpointOnce.Do(func() {
		out := filepath.Join(dir, "orchestrator-failpoints")
		cmd := exec.Command("go", "build", "-tags", "failpoints", "-o", out, "./services/orchestrator")
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			failpointErr = fmt.Errorf("%w\n%s", err, b)
			return
		}
		failpointOrch = out
	})
	if failpointErr != nil {
		t.Fatalf("build the failpoints orchestrator: %v", failpointErr)
	}
	return failpointOrch
}

// removeBins deletes the build directory (from TestMain).
func removeBins() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}
