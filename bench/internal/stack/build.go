package stack

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// Binaries are the programs a stack runs.
type Binaries struct {
	API, Orchestrator, Worker, Braid string
}

// Build compiles the api, orchestrator, worker and braid binaries of the
// workspace at root (the directory holding go.work) into dir.
func Build(ctx context.Context, root, dir string) (Binaries, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator),
		"./services/api", "./services/orchestrator", "./services/worker", "./cmd/braid")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return Binaries{}, fmt.Errorf("build service binaries in %s: %w\n%s", root, err, out)
	}
	return Binaries{
		API:          filepath.Join(dir, "api"),
		Orchestrator: filepath.Join(dir, "orchestrator"),
		Worker:       filepath.Join(dir, "worker"),
		Braid:        filepath.Join(dir, "braid"),
	}, nil
}

// RepoRoot walks up from dir to the directory that holds go.work.
func RepoRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if fileExists(filepath.Join(d, "go.work")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work above %s", abs)
		}
	}
}
