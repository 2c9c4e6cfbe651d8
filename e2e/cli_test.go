package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cliTimeout bounds one braid command.
const cliTimeout = 90 * time.Second

// cliResult is how a braid command ended.
type cliResult struct {
	code           int
	stdout, stderr string
}

// braid runs the braid binary with args and exactly env (plus PATH/HOME),
// from a temporary working directory so no .braid/api-key leaks in.
func braid(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins(t).Braid, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(baseEnv(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	res := cliResult{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("braid %v: %v", args, err)
	}
	t.Logf("braid %s → %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
	return res
}

// cliEnv points braid at stack s with its write key.
func (s *Stack) cliEnv() []string {
	return []string{"BRAID_URL=" + s.URL, "BRAID_API_KEY=" + s.Key}
}

// example is the absolute path of an example file.
func example(t *testing.T, name string) string {
	return filepath.Join(repoRoot(t), "examples", name)
}

func TestCLIApplyAndRunWatch(t *testing.T) {
	t.Parallel()
	s := shared(t)
	res := braid(t, s.cliEnv(), "apply", "-f", example(t, "seed-000-example-workflow.json"))
	require.Equal(t, 0, res.code, res.stderr)
	// Other tests on the shared stack register the same example: unchanged then.
	require.Regexp(t, `^(registered workflow example_workflow version \d+ \(from|workflow example_workflow unchanged \(version \d+,) `, res.stdout)

	ok := wfName(t, "cli-ok")
	bad := wfName(t, "cli-bad")
	dir := t.TempDir()
	okFile, badFile := filepath.Join(dir, "ok.json"), filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(okFile, shellWorkflow(ok, map[string]string{"a": "echo hi", "b": "echo there"},
		map[string][]string{"b": {"a"}}), 0o600))
	require.NoError(t, os.WriteFile(badFile, shellWorkflow(bad, map[string]string{"a": "echo hi", "b": "exit 4"},
		map[string][]string{"b": {"a"}}), 0o600))
	res = braid(t, s.cliEnv(), "apply", "-f", okFile, "-f", badFile)
	require.Equal(t, 0, res.code, res.stderr)

	res = braid(t, s.cliEnv(), "run", ok, "--input", "who=ann", "--watch")
	require.Equal(t, 0, res.code, "a succeeded run exits 0")
	require.Regexp(t, `run \S+ succeeded`, res.stdout)
	require.Contains(t, res.stderr, "2/2", "the progress bar counts finished nodes")

	res = braid(t, s.cliEnv(), "run", bad, "--watch")
	require.Equal(t, 1, res.code, "a failed run exits 1")
	require.Regexp(t, `run \S+ failed`, res.stdout)
	require.Contains(t, res.stdout, "node b failed")

	res = braid(t, s.cliEnv(), "run", bad, "--wait")
	require.Equal(t, 1, res.code, "--wait: a failed run exits 1")
	require.Regexp(t, `run \S+ failed`, res.stdout)
	require.Contains(t, res.stdout, "node b failed")
	res = braid(t, s.cliEnv(), "run", ok, "--wait", "--output", "json")
	require.Equal(t, 0, res.code, "--wait: a succeeded run exits 0: %s", res.stderr)
	require.Contains(t, res.stdout, `"status": "succeeded"`)

	res = braid(t, s.cliEnv(), "run", ok)
	require.Equal(t, 0, res.code)
	runID := regexp.MustCompile(`run (\S+) started`).FindStringSubmatch(res.stdout)
	require.Len(t, runID, 2)
	c := s.client(t)
	c.waitDone(runID[1], runTimeout)

	res = braid(t, s.cliEnv(), "get", runID[1])
	require.Equal(t, 0, res.code)
	require.Regexp(t, `(?m)^a\s+succeeded\s+1/1\s`, res.stdout)
	res = braid(t, s.cliEnv(), "runs", "--workflow", ok, "--output", "json")
	require.Equal(t, 0, res.code)
	require.Contains(t, res.stdout, runID[1])
	res = braid(t, s.cliEnv(), "logs", runID[1], "a")
	require.Equal(t, 0, res.code)
	require.Contains(t, res.stdout, "hi")

	// An idempotency key: the second request names the first one's run.
	key := "cli-" + runID[1]
	res = braid(t, s.cliEnv(), "run", ok, "--idempotency-key", key, "--input", "who=bob")
	require.Equal(t, 0, res.code, res.stderr)
	first := regexp.MustCompile(`run (\S+) started`).FindStringSubmatch(res.stdout)
	require.Len(t, first, 2)
	res = braid(t, s.cliEnv(), "run", ok, "--idempotency-key", key, "--input", "who=bob")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "run "+first[1]+" already started with this idempotency key (workflow "+ok+")\n", res.stdout)
	res = braid(t, s.cliEnv(), "run", ok, "--idempotency-key", key, "--input", "who=eve")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "already used with a different input")
}

// TestCLIFanOutOutputsAndLogs: on a real stack, braid get counts a fan-out
// node's instances, braid output prints the node's array, one instance's
// output (and a failed one's error), and braid logs --instance reads that
// instance's log.
func TestCLIFanOutOutputsAndLogs(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register([]byte(`{"name": "` + wfName(t, "cli-fan") + `", "nodes": [
	  {"id": "greet", "handler": "shell", "foreach": "<< input.cities >>",
	   "config": {"command": "echo \"hello $CITY\"; [ \"$CITY\" != nowhere ] || { echo \"no $CITY\" >&2; exit 3; }",
	              "output": "text", "env": {"CITY": "<< item >>"}}}
	]}`))
	id := c.start(name, `{"cities": ["lisbon", "oslo", "nowhere"]}`)
	require.Equal(t, "failed", c.waitDone(id, runTimeout).Status)

	res := braid(t, s.cliEnv(), "get", id)
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, `(?m)^greet\s+failed\s.*1 of 3 instances failed`, res.stdout)

	res = braid(t, s.cliEnv(), "output", id, "greet", "--instance", "1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, `"result": "hello oslo"`)
	res = braid(t, s.cliEnv(), "output", id, "greet", "--instance", "2")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "instance 2 of node greet of run "+id+" is failed without an output: shell: exit code 3: no nowhere")
	res = braid(t, s.cliEnv(), "output", id, "greet", "--instance", "3")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "has no instance 3")
	res = braid(t, s.cliEnv(), "logs", id, "greet", "--instance", "2")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "hello nowhere\n", res.stdout)
	require.Equal(t, "no nowhere\n", res.stderr)

	// A fan-out that succeeds: its output is the array of its instances'.
	id = c.start(name, `{"cities": ["lisbon", "oslo"]}`)
	require.Equal(t, "succeeded", c.waitDone(id, runTimeout).Status)
	res = braid(t, s.cliEnv(), "get", id)
	require.Regexp(t, `(?m)^greet\s+succeeded\s.*2 instances: 2 succeeded$`, res.stdout)
	res = braid(t, s.cliEnv(), "output", id, "greet")
	require.Equal(t, 0, res.code, res.stderr)
	var outs []struct {
		Result string `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &outs), res.stdout)
	require.Equal(t, []string{"hello lisbon", "hello oslo"}, []string{outs[0].Result, outs[1].Result})
}

// TestCLIWorkflows: on a real stack, a registered workflow is listed, its
// definition printed by braid workflow get is the same definition (apply
// registers nothing), a changed one registers as the next version, and
// once deleted it is neither listed nor startable — until applied again.
func TestCLIWorkflows(t *testing.T) {
	t.Parallel()
	s := shared(t)
	name := wfName(t, "cli-wf")
	file := filepath.Join(t.TempDir(), "wf.json")
	require.NoError(t, os.WriteFile(file, shellWorkflow(name, map[string]string{"a": "echo hi"}, nil), 0o600))
	res := braid(t, s.cliEnv(), "apply", "-f", file)
	require.Equal(t, 0, res.code, res.stderr)

	res = braid(t, s.cliEnv(), "workflows", "--limit", "500")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(name)+`\s+1\s`, res.stdout)

	res = braid(t, s.cliEnv(), "workflow", "get", name)
	require.Equal(t, 0, res.code, res.stderr)
	require.NoError(t, os.WriteFile(file, []byte(res.stdout), 0o600))
	res = braid(t, s.cliEnv(), "apply", "-f", file)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "workflow "+name+" unchanged (version 1, from "+file+")\n", res.stdout,
		"the stored definition, printed in another layout, is the same definition")
	require.NoError(t, os.WriteFile(file, shellWorkflow(name, map[string]string{"a": "echo changed"}, nil), 0o600))
	res = braid(t, s.cliEnv(), "apply", "-f", file)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "registered workflow "+name+" version 2")
	res = braid(t, s.cliEnv(), "workflow", "get", name, "--version", "3")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "has no version 3; its latest is 2")

	res = braid(t, s.cliEnv(), "workflow", "delete", name)
	require.Equal(t, 0, res.code, res.stderr)
	res = braid(t, s.cliEnv(), "workflows", "--limit", "500")
	require.Equal(t, 0, res.code, res.stderr)
	require.NotContains(t, res.stdout, name)
	res = braid(t, s.cliEnv(), "run", name)
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "not found")
	res = braid(t, s.cliEnv(), "apply", "-f", file)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "registered workflow "+name+" version 3", "a deleted workflow's definition registers again")
}

// TestCLIApprovalsPauseAndRerun: on a real stack, braid approve and
// reject decide an approval node (a rejection fails it with the reason),
// braid pause holds a run's next dispatch until braid resume, and braid
// rerun --from runs a node again.
func TestCLIApprovalsPauseAndRerun(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register([]byte(`{"name": "` + wfName(t, "cli-gate") + `", "nodes": [
	  {"id": "gate", "handler": "approval", "config": {"message": "ship it?"}},
	  {"id": "after", "handler": "shell", "depends_on": ["gate"], "config": {"command": "echo shipped"}}
	]}`))
	waiting := func(r apiRun) bool { return len(r.Nodes) > 0 && r.node(t, "gate").State == "queued" }

	ok := c.start(name, `{}`)
	c.waitRun(ok, runTimeout, "gate waiting", waiting)
	res := braid(t, s.cliEnv(), "pause", ok)
	require.Equal(t, 0, res.code, res.stderr)
	c.waitRun(ok, runTimeout, "paused", func(r apiRun) bool { return r.Paused })
	res = braid(t, s.cliEnv(), "approve", ok, "gate")
	require.Equal(t, 0, res.code, res.stderr)
	c.waitRun(ok, runTimeout, "gate approved", func(r apiRun) bool { return r.node(t, "gate").State == "succeeded" })
	require.Equal(t, "pending", c.waitRun(ok, runTimeout, "read", func(apiRun) bool { return true }).node(t, "after").State,
		"nothing is dispatched while paused")
	res = braid(t, s.cliEnv(), "resume", ok)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "succeeded", c.waitDone(ok, runTimeout).Status)

	res = braid(t, s.cliEnv(), "rerun", ok, "--from", "after")
	require.Equal(t, 0, res.code, res.stderr)
	c.waitRun(ok, runTimeout, "after ran twice", func(r apiRun) bool {
		return r.Status == "succeeded" && r.node(t, "after").Attempt >= 2
	})

	no := c.start(name, `{}`)
	c.waitRun(no, runTimeout, "gate waiting", waiting)
	res = braid(t, s.cliEnv(), "reject", no, "gate", "--reason", "not today")
	require.Equal(t, 0, res.code, res.stderr)
	r := c.waitDone(no, runTimeout)
	require.Equal(t, "failed", r.Status)
	require.Contains(t, r.node(t, "gate").Error, "not today")
	res = braid(t, s.cliEnv(), "approve", no, "gate")
	require.Equal(t, 1, res.code, "an ended run's gate cannot be approved")
}

func TestCLICancelAndRetry(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register(shellWorkflow(wfName(t, "cli-cancel"), map[string]string{"nap": "sleep 30"}, nil))
	id := c.start(name, `{}`)
	c.waitRun(id, runTimeout, "nap running", func(r apiRun) bool {
		return len(r.Nodes) > 0 && r.node(t, "nap").State == "running"
	})
	res := braid(t, s.cliEnv(), "cancel", id)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "cancelled", c.waitDone(id, 20*time.Second).Status)
	res = braid(t, s.cliEnv(), "retry", id)
	require.Equal(t, 0, res.code, res.stderr)
	c.waitRun(id, runTimeout, "running again", func(r apiRun) bool { return r.Status == "running" || r.Status == "succeeded" })
	res = braid(t, s.cliEnv(), "cancel", id)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "cancelled", c.waitDone(id, 20*time.Second).Status)
	res = braid(t, s.cliEnv(), "delete", id)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "run "+id+" deleted\n", res.stdout)
	res = braid(t, s.cliEnv(), "get", id)
	require.Equal(t, 1, res.code, "a deleted run is not found: %s", res.stdout)
	require.Contains(t, res.stderr, "not found")
}

func TestCLIErrors(t *testing.T) {
	t.Parallel()
	s := shared(t)
	file := filepath.Join(t.TempDir(), "cycle.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"cyc","nodes":[
		{"id":"a","handler":"noop","depends_on":["b"]},{"id":"b","handler":"noop","depends_on":["a"]}]}`), 0o600))
	res := braid(t, s.cliEnv(), "apply", "-f", file)
	require.Equal(t, 1, res.code)
	require.Regexp(t, `(?m)^error: .+`, res.stderr)
	require.Regexp(t, `\$\.nodes\[\d\]\.depends_on.*: .*cycle`, res.stderr)
	require.Equal(t, 1, strings.Count(res.stderr, "cycle"), "the lone problem is printed once: %s", res.stderr)

	res = braid(t, []string{"BRAID_URL=" + s.URL, "BRAID_API_KEY=wrong"}, "runs")
	require.Equal(t, 1, res.code)
	require.Regexp(t, `(?m)^error: `, res.stderr)

	res = braid(t, s.cliEnv(), "get", "no-such-run")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "no-such-run")

	res = braid(t, s.cliEnv(), "run")
	require.Equal(t, 2, res.code, "a usage error exits 2")

	// Deleting a run that has not ended is refused, saying why.
	c := s.client(t)
	name, _ := c.register(shellWorkflow(wfName(t, "cli-nodelete"), map[string]string{"nap": "sleep 30"}, nil))
	id := c.start(name, `{}`)
	res = braid(t, s.cliEnv(), "delete", id)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stderr, "only an ended run")
	res = braid(t, s.cliEnv(), "cancel", id)
	require.Equal(t, 0, res.code, res.stderr)
}

func TestCLIValidateOffline(t *testing.T) {
	t.Parallel()
	// No API anywhere: validate must not need one.
	env := []string{"BRAID_URL=http://127.0.0.1:1"}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"name":"Bad Name","nodes":[
		{"id":"a","handler":"noop","depends_on":["ghost"]},
		{"id":"a","handler":"noop","timeout":"soon"}]}`), 0o600))
	res := braid(t, env, "validate", "-f", bad)
	require.Equal(t, 1, res.code)
	for _, path := range []string{"$.name", "$.nodes[0].depends_on[0]", "$.nodes[1].id", "$.nodes[1].timeout"} {
		require.Contains(t, res.stdout, "  "+path+": ", "every problem is listed with its path")
	}
	res = braid(t, env, "validate", "-f", example(t, "seed-000-example-workflow.json"))
	require.Equal(t, 0, res.code)
	require.Contains(t, res.stdout, "valid (workflow example_workflow, 4 nodes)")
}

func TestCLIValidateExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "examples", "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 8, "the seeds' examples and the feature examples")
	args := []string{"validate"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	res := braid(t, nil, args...)
	require.Equal(t, 0, res.code, res.stdout)
	require.Equal(t, len(files), strings.Count(res.stdout, ": valid ("))
}
