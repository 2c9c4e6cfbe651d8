package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/braidhq/braid/pkg/testkit/procstack"
	"github.com/stretchr/testify/require"
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

// Variant builds (failpoints, race): built on first use only, beside the
// others, one per service and variant.
var (
	variantMu    sync.Mutex
	variantBuilt = map[string]string{}
)

// failpointOrchestrator is failpointBin(t, "orchestrator").
func failpointOrchestrator(t testing.TB) string { return failpointBin(t, "orchestrator") }

// failpointBin builds service with the failpoints build tag
// (services/orchestrator/internal/failpoint, pkg/worker/internal/failpoint),
// once, and returns its path. Only the tests that inject a failpoint run
// it; every other test runs the normal build, which has no failpoint code.
func failpointBin(t testing.TB, service string) string {
	t.Helper()
	return variantBin(t, service, "failpoints", "-tags", "failpoints")
}

// raceBin builds service ("api", "orchestrator", "worker") with the race
// detector, once, and returns its path: a race in the real process under
// fault injection prints "WARNING: DATA RACE" to its log.
func raceBin(t testing.TB, service string) string {
	t.Helper()
	return variantBin(t, service, "race", "-race")
}

// variantBin builds ./services/<service> with flags as <service>-<variant>,
// once.
func variantBin(t testing.TB, service, variant string, flags ...string) string {
	t.Helper()
	variantMu.Lock()
	defer variantMu.Unlock()
	key := service + "-" + variant
	if out, ok := variantBuilt[key]; ok {
		return out
	}
	out := filepath.Join(filepath.Dir(bins(t).Orchestrator), key)
	args := append(append([]string{"build"}, flags...), "-o", out, "./services/"+service)
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the %s %s: %v\n%s", variant, service, err, b)
	}
	variantBuilt[key] = out
	return out
}

// removeBins deletes the build directory (from TestMain).
func removeBins() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// TestServiceHealthchecks: each service binary's `healthcheck` argument
// (the probe of a distroless container's health check) answers 0 while the
// service is ready and 1 once it is gone.
func TestServiceHealthchecks(t *testing.T) {
	t.Parallel()
	orchAddr, workerAddr := freeAddr(t), freeAddr(t)
	f := startFaultStack(t, stackOpts{workers: 1,
		orchEnv:   func(int) []string { return []string{"BRAID_ORCHESTRATOR_METRICS_ADDR=" + orchAddr} },
		workerEnv: func(int) []string { return []string{"BRAID_WORKER_HTTP_ADDR=" + workerAddr} }})
	waitOpsReady(t, orchAddr, workerAddr)
	check := func(bin string, env ...string) error {
		cmd := exec.Command(bin, "healthcheck")
		cmd.Env = append(baseEnv(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	}
	b := bins(t)
	require.NoError(t, check(b.API, "BRAID_API_ADDR="+strings.TrimPrefix(f.URL, "http://")))
	require.NoError(t, check(b.Orchestrator, "BRAID_ORCHESTRATOR_METRICS_ADDR="+orchAddr))
	require.NoError(t, check(b.Worker, "BRAID_WORKER_HTTP_ADDR="+workerAddr))
	f.kill(f.workerProcs[0])
	require.ErrorContains(t, check(b.Worker, "BRAID_WORKER_HTTP_ADDR="+workerAddr), "not ready")
}
