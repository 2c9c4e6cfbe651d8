package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/braidhq/braid/cmd/braid/internal/client"
	"github.com/spf13/cobra"
)

// runFlags are the flags of braid run.
type runFlags struct {
	inputs    []string
	inputJSON string
	watch     bool
}

func newRunCmd(a *app) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run WORKFLOW [--input k=v ...] [--input-json '{...}'] [--watch]",
		Short: "Start a run of a registered workflow, optionally watching it to the end",
		Long: `run starts a run of the latest version of WORKFLOW and prints its id.

--input k=v sets one input; values that are JSON numbers, true/false, null,
objects or arrays keep their type, anything else is a string. --input-json
gives the whole input object; --input pairs override its keys.

With --watch, run shows a live progress bar of the run's nodes and exits 0
only when the run succeeded (1 when it failed or was cancelled).`,
		Args: exactArgs(1, "WORKFLOW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.startRun(cmd.Context(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.inputs, "input", "i", nil, "input key=value; repeatable")
	fl.StringVar(&f.inputJSON, "input-json", "", "input as a JSON object")
	fl.BoolVarP(&f.watch, "watch", "w", false, "show live progress and exit 0 only if the run succeeds")
	return cmd
}

// startRun starts the run and, with --watch, follows it.
func (a *app) startRun(ctx context.Context, workflow string, f runFlags) error {
	input, err := buildInput(f.inputJSON, f.inputs)
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	id, err := c.StartRun(ctx, workflow, input)
	if err != nil {
		return err
	}
	if !f.watch {
		if a.json() {
			return a.writeJSON(map[string]string{"run_id": id})
		}
		a.printf("run %s started (workflow %s)\n", id, workflow)
		return nil
	}
	fmt.Fprintf(a.errOut, "run %s started (workflow %s)\n", id, workflow)
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
