package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newOutputCmd is braid output: a node's output as JSON on stdout, for
// scripts (`braid output RUN report | jq .total`).
func newOutputCmd(a *app) *cobra.Command {
	var inst int
	cmd := &cobra.Command{
		Use:   "output RUN NODE [--instance N]",
		Short: "Print a node's output as JSON (a fan-out node's: the array of its instances'; --instance N: one instance's)",
		Args:  exactArgs(2, "RUN NODE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("instance") {
				inst = -1
			} else if inst < 0 {
				return usageErrorf("--instance %d: want 0 or more", inst)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			t, raw, err := c.Task(cmd.Context(), args[0], args[1], inst)
			if err != nil {
				return err
			}
			if a.json() {
				return a.writeRaw(raw)
			}
			if t.Output == nil {
				what := fmt.Sprintf("node %s", args[1])
				if inst >= 0 {
					what = fmt.Sprintf("instance %d of node %s", inst, args[1])
				}
				if t.Error != "" {
					return fmt.Errorf("%s of run %s is %s without an output: %s", what, args[0], t.State, t.Error)
				}
				return fmt.Errorf("%s of run %s is %s: no output", what, args[0], t.State)
			}
			return a.writeRaw(t.Output)
		},
	}
	cmd.Flags().IntVar(&inst, "instance", 0, "a fan-out node's instance (default: the node's own output)")
	return cmd
}
