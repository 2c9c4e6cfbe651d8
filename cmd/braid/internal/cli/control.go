package cli

import (
	"github.com/spf13/cobra"
)

// controlShort describes each run control command.
var controlShort = map[string]string{
	"cancel": "Cancel a run: no new dispatches, running tasks are stopped",
	"retry":  "Retry a run: failed, skipped and cancelled nodes run again; succeeded outputs are kept",
}

// newControlCmd builds braid cancel or braid retry.
func newControlCmd(a *app, verb string) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " RUN",
		Short: controlShort[verb],
		Args:  exactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			do := c.Cancel
			if verb == "retry" {
				do = c.Retry
			}
			if err := do(cmd.Context(), args[0]); err != nil {
				return err
			}
			if a.json() {
				return a.writeJSON(map[string]string{"run_id": args[0], "requested": verb})
			}
			a.printf("%s requested for run %s\n", verb, args[0])
			return nil
		},
	}
}
