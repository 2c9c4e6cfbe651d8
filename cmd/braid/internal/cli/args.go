package cli

import "github.com/spf13/cobra"

// noArgs rejects positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments; got %q", cmd.CommandPath(), args)
	}
	return nil
}

// exactArgs wants exactly n positional arguments, named in the message.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("usage: %s %s", cmd.CommandPath(), names)
		}
		return nil
	}
}
