package cli

import (
	"fmt"

	"github.com/braidhq/braid/pkg/buildinfo"
	"github.com/spf13/cobra"
)

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the CLI's version and commit (release builds are stamped with -ldflags)",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			i := buildinfo.Get()
			if a.output == outputJSON {
				return a.writeJSON(i)
			}
			_, err := fmt.Fprintf(a.out, "braid %s (%s)\n", i, i.Go)
			return err
		},
	}
}
