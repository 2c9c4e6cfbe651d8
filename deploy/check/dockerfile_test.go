package check

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/require"
)

// image is one Dockerfile and what it builds.
type image struct {
	file, dir, bin string
	healthcheck    bool
}

var images = []image{
	{"deploy/api.Dockerfile", "services/api", "braid-api", true},
	{"deploy/orchestrator.Dockerfile", "services/orchestrator", "braid-orchestrator", true},
	{"deploy/worker.Dockerfile", "services/worker", "braid-worker", true},
	{"deploy/braid.Dockerfile", "cmd/braid", "braid", false},
}

// stage is one FROM ... and the instructions after it.
type stage struct {
	from string
	ins  []*parser.Node
}

func parseDockerfile(t *testing.T, file string) []stage {
	t.Helper()
	f, err := os.Open(filepath.Join(root, file))
	require.NoError(t, err)
	defer f.Close()
	res, err := parser.Parse(f)
	require.NoError(t, err, file)
	var stages []stage
	for _, n := range res.AST.Children {
		if strings.EqualFold(n.Value, "from") {
			stages = append(stages, stage{from: n.Original})
			continue
		}
		if len(stages) > 0 {
			stages[len(stages)-1].ins = append(stages[len(stages)-1].ins, n)
		}
	}
	return stages
}

func find(s stage, cmd string) []string {
	var out []string
	for _, n := range s.ins {
		if strings.EqualFold(n.Value, cmd) {
			out = append(out, n.Original)
		}
	}
	return out
}

// TestDockerfilesBuildStaticNonRootImages: two stages; the build runs in the
// service's own module with GOWORK=off, CGO_ENABLED=0, time-zone data and a
// stamped version; the runtime is distroless (CA certificates) as nonroot,
// with the binary's own health check.
func TestDockerfilesBuildStaticNonRootImages(t *testing.T) {
	t.Parallel()
	for _, im := range images {
		stages := parseDockerfile(t, im.file)
		require.Len(t, stages, 2, im.file)
		run := strings.Join(find(stages[0], "run"), "\n")
		for _, want := range []string{"cd " + im.dir + " ", "GOWORK=off", "CGO_ENABLED=0", "-tags timetzdata", "pkg/buildinfo.Version=", "-o /out/" + im.bin + " "} {
			require.Contains(t, run, want, im.file)
		}
		final := stages[1]
		require.Contains(t, final.from, "gcr.io/distroless/static", im.file)
		require.Equal(t, []string{"USER nonroot:nonroot"}, find(final, "user"), im.file)
		require.Contains(t, strings.Join(find(final, "entrypoint"), ""), "/usr/local/bin/"+im.bin, im.file)
		labels := strings.Join(find(final, "label"), "\n")
		require.Contains(t, labels, "org.opencontainers.image.version", im.file)
		require.Contains(t, labels, "org.opencontainers.image.revision", im.file)
		hc := strings.Join(find(final, "healthcheck"), "")
		if im.healthcheck {
			require.Contains(t, hc, `"/usr/local/bin/`+im.bin+`", "healthcheck"`, im.file)
		} else {
			require.Empty(t, hc, im.file)
		}
	}
}

// TestEachImageBuildsAsItsDockerfileBuildsIt runs each Dockerfile's own
// build command (its RUN line, with /out in a temp dir) on this checkout:
// what a `docker build` would compile, without an engine.
func TestEachImageBuildsAsItsDockerfileBuildsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds four static binaries")
	}
	t.Parallel()
	abs, err := filepath.Abs(root)
	require.NoError(t, err)
	for _, im := range images {
		out := t.TempDir()
		run := strings.Join(find(parseDockerfile(t, im.file)[0], "run"), "\n")
		script := strings.TrimSpace(strings.TrimPrefix(run, "RUN "))
		script = strings.ReplaceAll(script, "/out/", out+"/")
		script = strings.NewReplacer("${VERSION}", "v0.0.0-check", "${COMMIT}", "check").Replace(script)
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = abs
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s\n%s", im.file, script, b)
		bin := filepath.Join(out, im.bin)
		info, err := os.Stat(bin)
		require.NoError(t, err)
		require.Positive(t, info.Size())
		if im.healthcheck {
			continue
		}
		v, err := exec.Command(bin, "version").CombinedOutput()
		require.NoError(t, err, "%s", v)
		require.Contains(t, string(v), "braid v0.0.0-check (check)")
	}
}
