package cli

import (
	"github.com/braidhq/braid/cmd/braid/internal/client"
	"github.com/spf13/cobra"
)

// newWorkflowsCmd builds braid workflows: list registered workflows.
func newWorkflowsCmd(a *app) *cobra.Command {
	return newPageCmd(a, "workflows [--limit N] [--cursor C]", "List registered workflows, newest first", "workflows", 50,
		(*client.Client).ListWorkflows, a.printWorkflows)
}

// printWorkflows prints a page of workflows as a table.
func (a *app) printWorkflows(page client.WorkflowPage) error {
	t := newTable(a.out, "WORKFLOW", "VERSION", "REGISTERED", "UPDATED")
	for _, w := range page.Items {
		t.row(w.Name, w.LatestVersion, stamp(w.CreatedAt.Time), stamp(w.UpdatedAt.Time))
	}
	return a.endList(t, len(page.Items), "no workflows (register one with braid apply -f FILE)", page.NextCursor)
}

// newWorkflowCmd builds braid workflow get|delete.
func newWorkflowCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "Show a workflow's definition or delete a workflow",
		Args:  noArgs,
	}
	cmd.AddCommand(newWorkflowGetCmd(a), newWorkflowDeleteCmd(a))
	return cmd
}

func newWorkflowGetCmd(a *app) *cobra.Command {
	var version int
	cmd := &cobra.Command{
		Use:   "get NAME [--version N]",
		Short: "Print a workflow's definition as registered (the latest version unless --version), ready for braid apply -f",
		Args:  exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if version < 0 {
				return usageErrorf("--version %d: want 1 or more", version)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			doc, raw, err := c.GetWorkflow(cmd.Context(), args[0], version)
			if err != nil {
				return err
			}
			if a.json() {
				return a.writeRaw(raw)
			}
			return a.writeRaw(doc.Definition)
		},
	}
	cmd.Flags().IntVar(&version, "version", 0, "version to show (default: the latest)")
	return cmd
}

func newWorkflowDeleteCmd(a *app) *cobra.Command {
	return newDeleteCmd(a, "NAME", "Delete a workflow: no new runs of it; runs already started finish on their version", "workflow", "workflow",
		(*client.Client).DeleteWorkflow)
}
