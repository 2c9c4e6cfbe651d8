package cli

import (
	"github.com/braidhq/braid/cmd/braid/internal/client"
	"github.com/spf13/cobra"
)

// controlSpec is one run control command.
type controlSpec struct {
	verb, short string
	// node: the command names an approval node (RUN NODE); from: it takes
	// --from NODE (rerun); reason: it takes --reason.
	node, from, reason bool
}

var controlSpecs = []controlSpec{
	{verb: "cancel", short: "Cancel a run: no new dispatches, running tasks are stopped", reason: true},
	{verb: "retry", short: "Retry a run: failed, skipped and cancelled nodes run again; succeeded outputs are kept"},
	{verb: "pause", short: "Pause a run: nothing new is dispatched; running tasks finish"},
	{verb: "resume", short: "Resume a paused run"},
	{verb: "rerun", short: "Rerun a finished run from a node: it and everything downstream run again", from: true},
	{verb: "approve", short: "Approve a waiting approval node", node: true, reason: true},
	{verb: "reject", short: "Reject a waiting approval node (it fails)", node: true, reason: true},
}

// newControlCmds builds the run control commands.
func newControlCmds(a *app) []*cobra.Command {
	out := make([]*cobra.Command, len(controlSpecs))
	for i, sp := range controlSpecs {
		out[i] = newControlCmd(a, sp)
	}
	return out
}

// newControlCmd builds one run control command.
func newControlCmd(a *app, sp controlSpec) *cobra.Command {
	var req client.Control
	n, args := 1, "RUN"
	if sp.node {
		n, args = 2, "RUN NODE"
	}
	use := sp.verb + " " + args
	if sp.from {
		use += " --from NODE"
	}
	if sp.reason {
		use += " [--reason TEXT]"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: sp.short,
		Args:  exactArgs(n, args),
		RunE: func(cmd *cobra.Command, args []string) error {
			if sp.from && req.From == "" {
				return usageErrorf("--from is required: the node to rerun from")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			req.Run, req.Verb = args[0], sp.verb
			if sp.node {
				req.Node = args[1]
			}
			if err := c.Control(cmd.Context(), req); err != nil {
				return err
			}
			if a.json() {
				out := map[string]string{"run_id": req.Run, "requested": sp.verb}
				if req.Node != "" {
					out["node"] = req.Node
				}
				return a.writeJSON(out)
			}
			if req.Node != "" {
				a.printf("%s requested for node %s of run %s\n", sp.verb, req.Node, req.Run)
			} else {
				a.printf("%s requested for run %s\n", sp.verb, req.Run)
			}
			return nil
		},
	}
	if sp.from {
		cmd.Flags().StringVar(&req.From, "from", "", "the node to rerun from (required)")
	}
	if sp.reason {
		cmd.Flags().StringVar(&req.Reason, "reason", "", "why, recorded with the request")
	}
	return cmd
}

// newRunDeleteCmd builds braid delete RUN.
func newRunDeleteCmd(a *app) *cobra.Command {
	return newDeleteCmd(a, "RUN", "Delete an ended run now, whole (its records, outputs and logs), as the run retention (BRAID_RUN_RETENTION) would later", "run", "run_id",
		(*client.Client).DeleteRun)
}
