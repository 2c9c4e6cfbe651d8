package procstack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// servicePackages are the programs every stack runs, relative to the
// workspace root.
var servicePackages = []string{"./services/api", "./services/orchestrator", "./services/worker", "./cmd/braid"}

// Binaries are the paths of the programs a stack runs.
type Binaries struct {
	// API, Orchestrator, Worker and Braid are the services' and the CLI's
	// executables.
	API, Orchestrator, Worker, Braid string
	// Dir holds them, and Build's extra programs, each named by the last
	// element of its package path.
	Dir string
}

// Build compiles the api, orchestrator, worker and braid binaries of the
// workspace at root (the directory holding go.work), and the extra
// packages (paths relative to root, e.g. "./e2e/internal/cmd/kfakebroker"),
// into dir with one `go build`. A failure returns the compiler's output.
func Build(ctx context.Context, root, dir string, extra ...string) (Binaries, error) {
	args := append([]string{"build", "-o", dir + string(filepath.Separator)}, servicePackages...)
	cmd := exec.CommandContext(ctx, "go", append(args, extra...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return Binaries{}, fmt.Errorf("build service binaries in %s: %w\n%s", root, err, out)
	}
	return Binaries{
		API:          filepath.Join(dir, "api"),
		Orchestrator: filepath.Join(dir, "orchestrator"),
		Worker:       filepath.Join(dir, "worker"),
		Braid:        filepath.Join(dir, "braid"),
		Dir:          dir,
	}, nil
}

// RepoRoot walks up from dir to the directory that holds go.work.
func RepoRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("repo root of %s: %w", dir, err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work above %s", abs)
		}
	}
}
