package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// newWorkersCmd builds braid workers: the worker processes the api knows,
// with their pool and handlers.
func newWorkersCmd(a *app) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "workers [--all]",
		Short: "List live workers: their pool, the handlers they offer, tasks in flight",
		Long: `workers lists the live worker processes (GET /workers): each one's id, its pool
(workers offering the same handler set share a consumer group), the handlers it
offers, its tasks in flight out of its concurrency, and when it was last seen.
A task whose handler no live worker offers waits queued until one starts.
--all also lists workers whose heartbeats stopped.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			list, raw, err := c.ListWorkers(cmd.Context(), all)
			if err != nil {
				return err
			}
			if a.json() {
				return a.writeRaw(raw)
			}
			cols := []any{"WORKER", "POOL", "HANDLERS", "IN FLIGHT", "STARTED", "SEEN"}
			if all {
				cols = append(cols, "LIVE")
			}
			t := newTable(a.out, cols...)
			now := time.Now()
			for _, w := range list.Items {
				row := []any{w.ID, dash(w.Group), strings.Join(w.Handlers, ","), fmt.Sprintf("%d/%d", w.InFlight, w.Concurrency),
					stamp(w.StartedAt.Time), seen(now, w.SeenAt.Time)}
				if all {
					row = append(row, map[bool]string{true: "yes", false: "no"}[w.Live])
				}
				t.row(row...)
			}
			none := "no live workers (tasks wait queued until one starts; --all lists those whose heartbeats stopped)"
			if all {
				none = "no workers registered"
			}
			return a.endList(t, len(list.Items), none, "")
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also list workers whose heartbeats stopped")
	return cmd
}

// seen says how long before now t was, or "-".
func seen(now, t time.Time) string {
	switch d := now.Sub(t); {
	case t.IsZero():
		return "-"
	case d < time.Second:
		return "now"
	default:
		return human(d.Round(time.Second)) + " ago"
	}
}
