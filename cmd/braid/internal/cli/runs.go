package cli

import (
	"time"

	"github.com/braidhq/braid/cmd/braid/internal/client"
	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/spf13/cobra"
)

func newRunsCmd(a *app) *cobra.Command {
	var f client.RunFilter
	cmd := &cobra.Command{
		Use:   "runs [--workflow W] [--status S] [--limit N] [--cursor C]",
		Short: "List runs, newest first",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkLimit(f.Limit); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			page, raw, err := c.ListRuns(cmd.Context(), f)
			if err != nil {
				return err
			}
			if a.json() {
				return a.writeRaw(raw)
			}
			return a.printRuns(page)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Workflow, "workflow", "", "only runs of this workflow")
	fl.StringVar(&f.Status, "status", "", "only runs in this status (pending, running, succeeded, failed, cancelling, cancelled)")
	fl.IntVar(&f.Limit, "limit", 20, "most runs to list (at least 1; the api allows up to 500)")
	fl.StringVar(&f.Cursor, "cursor", "", "continue after the previous page (printed at its end)")
	return cmd
}

// printRuns prints a page of runs as a table.
func (a *app) printRuns(page client.RunPage) error {
	t := newTable(a.out, "RUN", "WORKFLOW", "VERSION", "STATUS", "CREATED", "DURATION")
	now := time.Now()
	for _, r := range page.Items {
		t.row(r.ID, r.Workflow, r.Version, r.Status, stamp(r.CreatedAt.Time), human(span(r.StartedAt, r.FinishedAt, now)))
	}
	return a.endList(t, len(page.Items), "no runs", page.NextCursor)
}

// span is finished-started, or now-started while a run or node is active,
// or 0 before it started.
func span(started, finished apiwire.Time, now time.Time) time.Duration {
	if started.IsZero() {
		return 0
	}
	end := finished.Time
	if end.IsZero() {
		end = now
	}
	return max(end.Sub(started.Time), 0)
}
