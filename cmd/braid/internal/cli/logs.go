package cli

import (
	"github.com/braidhq/braid/cmd/braid/internal/client"
	"github.com/spf13/cobra"
)

// logsFlags are the flags of braid logs.
type logsFlags struct {
	attempt  int
	instance int
	follow   bool
}

func newLogsCmd(a *app) *cobra.Command {
	var f logsFlags
	cmd := &cobra.Command{
		Use:   "logs RUN NODE [--instance N] [--attempt N] [-f]",
		Short: "Print a node's log (the latest attempt unless --attempt; a fan-out instance's with --instance); -f follows it live",
		Args:  exactArgs(2, "RUN NODE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.attempt < 0 {
				return usageErrorf("--attempt %d: want 1 or more", f.attempt)
			}
			if f.instance < 0 {
				return usageErrorf("--instance %d: want 0 or more", f.instance)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			if f.follow {
				return c.FollowLogs(cmd.Context(), args[0], args[1], f.instance, f.attempt, func(l client.LogLine) error {
					return a.printLogLine(l)
				})
			}
			page, raw, err := c.Logs(cmd.Context(), args[0], args[1], f.instance, f.attempt)
			if err != nil {
				return err
			}
			if a.json() {
				return a.writeRaw(raw)
			}
			for _, l := range page.Lines {
				if err := a.printLogLine(l); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&f.attempt, "attempt", 0, "attempt number (default: the latest)")
	cmd.Flags().IntVar(&f.instance, "instance", 0, "a fan-out node's instance (default: 0)")
	cmd.Flags().BoolVarP(&f.follow, "follow", "f", false, "stream new lines until the attempt ends")
	return cmd
}

// printLogLine prints one line: as JSON with --output json, else the text
// (stderr lines go to stderr, so they can be told apart).
func (a *app) printLogLine(l client.LogLine) error {
	if a.json() {
		return a.writeJSONLine(l)
	}
	w := a.out
	if l.Stream == "stderr" {
		w = a.errOut
	}
	_, err := w.Write([]byte(l.Line + "\n"))
	return err
}
