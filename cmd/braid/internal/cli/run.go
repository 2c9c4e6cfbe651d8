package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/braidhq/braid/cmd/braid/internal/client"
	"github.com/braidhq/braid/pkg/clock"
	"github.com/spf13/cobra"
)

// runFlags are the flags of braid run.
type runFlags struct {
	inputs         []string
	inputJSON      string
	idempotencyKey string
	watch          bool
	wait           bool
}

func newRunCmd(a *app) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run WORKFLOW [--input k=v ...] [--input-json '{...}' | @FILE] [--idempotency-key K] [--watch | --wait]",
		Short: "Start a run of a registered workflow, optionally watching it to the end",
		Long: `run starts a run of the latest version of WORKFLOW and prints its id.

--input k=v sets one input; values that are JSON numbers, true/false, null,
objects or arrays keep their type, anything else is a string. --input-json
gives the whole input object (@FILE reads it from a file, @- from stdin);
--input pairs override its keys.

--idempotency-key K makes the request safe to repeat (a cron job retried,
a script run twice): a second request with the same key and input starts
nothing and names the run the first one started (for 24 hours); the same
key with another input is refused.

With --watch, run shows a live progress bar of the run's nodes and exits 0
only when the run succeeded (1 when it failed or was cancelled). --wait
does the same without the progress bar (for scripts): it blocks until the
run ends (GET /runs/{id}?wait=), prints how it ended (the run as JSON with
-o json) and sets the exit code the same way.`,
		Args: exactArgs(1, "WORKFLOW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.startRun(cmd.Context(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.inputs, "input", "i", nil, "input key=value; repeatable")
	fl.StringVar(&f.inputJSON, "input-json", "", "input as a JSON object; @FILE reads it from a file, @- from stdin")
	fl.StringVar(&f.idempotencyKey, "idempotency-key", "", "start at most one run per key and input (Idempotency-Key)")
	fl.BoolVarP(&f.watch, "watch", "w", false, "show live progress and exit 0 only if the run succeeds")
	fl.BoolVar(&f.wait, "wait", false, "block until the run ends, print how it ended and exit 0 only if it succeeded")
	return cmd
}

// startRun starts the run and, with --watch, follows it.
func (a *app) startRun(ctx context.Context, workflow string, f runFlags) error {
	if f.watch && f.wait {
		return usageErrorf("--watch and --wait exclude each other: --watch shows progress, --wait only blocks")
	}
	inputJSON, err := a.inputJSON(f.inputJSON)
	if err != nil {
		return err
	}
	input, err := buildInput(inputJSON, f.inputs)
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	id, replayed, err := c.StartRun(ctx, workflow, input, f.idempotencyKey)
	if err != nil {
		return err
	}
	started := "started"
	if replayed {
		started = "already started with this idempotency key"
	}
	if f.wait {
		fmt.Fprintf(a.errOut, "run %s %s (workflow %s)\n", id, started, workflow)
		return a.awaitRun(ctx, c, id)
	}
	if !f.watch {
		if a.json() {
			return a.writeJSON(map[string]any{"run_id": id, "replayed": replayed})
		}
		a.printf("run %s %s (workflow %s)\n", id, started, workflow)
		return nil
	}
	fmt.Fprintf(a.errOut, "run %s %s (workflow %s)\n", id, started, workflow)
	return a.watchRun(ctx, c, id)
}

// watchRun follows run id to its end and sets the exit code from its status.
func (a *app) watchRun(ctx context.Context, c *client.Client, id string) error {
	p := newPainter(a.errOut, isTerminal(a.errOut))
	w := &watcher{c: c, id: id, draw: p.draw, warn: p.warn, poll: pollInterval, idle: safetyInterval}
	run, err := w.run(ctx)
	p.finish()
	if err != nil {
		return fmt.Errorf("watch run %s: %w", id, err)
	}
	return a.reportEnd(run)
}

// waitRound is how long one GET /runs/{id}?wait= of --wait may wait: less
// than the client's request timeout (client.DefaultTimeout).
const waitRound = 20 * time.Second

// awaitRun blocks until run id has ended, asking the api to answer when it
// does (GET /runs/{id}?wait=) in rounds of waitRound, and then reports it
// like watchRun. Transient errors are retried (maxGetFailures in a row,
// pollInterval apart); a 4xx answer is not.
func (a *app) awaitRun(ctx context.Context, c *client.Client, id string) error {
	for failures := 0; ; {
		run, _, err := c.WaitRun(ctx, id, waitRound)
		switch {
		case err == nil && terminalRun(run.Status):
			return a.reportEnd(run)
		case err == nil:
			failures = 0
			continue
		case fatal(err) || failures+1 >= maxGetFailures:
			return fmt.Errorf("wait for run %s: %w", id, err)
		}
		failures++
		if err := clock.Sleep(ctx, pollInterval); err != nil {
			return fmt.Errorf("wait for run %s: %w", id, err)
		}
	}
}

// reportEnd prints how run ended (as JSON with --json) and sets the exit
// code: 0 only when it succeeded.
func (a *app) reportEnd(run client.Run) error {
	if a.json() {
		if err := a.writeJSON(run); err != nil {
			return err
		}
	} else {
		a.printSummary(run)
	}
	if run.Status != "succeeded" {
		return exitCode(1)
	}
	return nil
}

// printSummary prints how a run ended and why nodes failed.
func (a *app) printSummary(run client.Run) {
	took := ""
	if !run.StartedAt.IsZero() && !run.FinishedAt.IsZero() {
		took = " in " + human(run.FinishedAt.Sub(run.StartedAt.Time))
	}
	a.printf("run %s %s%s\n", run.ID, run.Status, took)
	if run.Error != "" {
		a.printf("  error: %s\n", run.Error)
	}
	for _, n := range run.Nodes {
		if n.State == "failed" && n.Error != "" {
			a.printf("  node %s failed (attempt %d): %s\n", n.ID, n.Attempt, n.Error)
		}
	}
}

// isTerminal reports whether w is a character device (an interactive terminal).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
