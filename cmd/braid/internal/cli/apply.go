package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newApplyCmd(a *app) *cobra.Command {
	var files []string
	cmd := &cobra.Command{
		Use:   "apply -f FILE [-f FILE...]",
		Short: "Register workflow definitions (a new version when the name exists)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return usageErrorf("apply: give a definition with -f FILE")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			var refs []any
			for _, path := range files {
				def, err := readFile(path, a.in)
				if err != nil {
					return err
				}
				ref, err := c.Apply(cmd.Context(), def)
				if err != nil {
					return err
				}
				refs = append(refs, ref)
				if !a.json() {
					a.printf("registered workflow %s version %d (from %s)\n", ref.Name, ref.Version, path)
				}
				for _, w := range ref.Warnings {
					fmt.Fprintf(a.errOut, "warning: workflow %s: %s\n", ref.Name, w)
				}
			}
			if a.json() {
				return a.writeJSON(unwrapOne(refs))
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, `workflow definition JSON file ("-" for standard input); repeatable`)
	return cmd
}

// unwrapOne returns the only element of a one-element list, else the list.
func unwrapOne(items []any) any {
	if len(items) == 1 {
		return items[0]
	}
	return items
}
