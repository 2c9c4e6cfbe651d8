package cli

import (
	"github.com/braidhq/braid/cmd/braid/internal/client"
	"github.com/spf13/cobra"
)

// newSchedulesCmd builds braid schedules: list schedules.
func newSchedulesCmd(a *app) *cobra.Command {
	return newPageCmd(a, "schedules [--limit N] [--cursor C]", "List schedules, newest first", "schedules", 50,
		(*client.Client).ListSchedules, a.printSchedules)
}

// printSchedules prints a page of schedules as a table.
func (a *app) printSchedules(page client.SchedulePage) error {
	t := newTable(a.out, "SCHEDULE", "WORKFLOW", "CRON", "TIMEZONE", "ENABLED", "OVERLAP", "NEXT", "LAST RUN")
	for _, s := range page.Items {
		t.row(s.ID, s.Workflow, s.Cron, s.Timezone, s.Enabled, s.Overlap, stamp(s.NextFireAt.Time), s.LastRunID)
	}
	return a.endList(t, len(page.Items), "no schedules", page.NextCursor)
}

// newScheduleCmd builds braid schedule create|enable|disable|delete.
func newScheduleCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Create, enable, disable or delete a schedule",
		Args:  noArgs,
	}
	cmd.AddCommand(newScheduleCreateCmd(a), newScheduleEnableCmd(a, true), newScheduleEnableCmd(a, false), newScheduleDeleteCmd(a))
	return cmd
}

// newScheduleEnableCmd builds braid schedule enable (on) or disable.
func newScheduleEnableCmd(a *app, on bool) *cobra.Command {
	verb, short := "enable", "Enable a schedule: its timing restarts from now (fires missed while disabled are not made up)"
	if !on {
		verb, short = "disable", "Disable a schedule: it stops firing; runs it started go on"
	}
	return &cobra.Command{
		Use:   verb + " SCHEDULE",
		Short: short,
		Args:  exactArgs(1, "SCHEDULE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			s, raw, err := c.SetScheduleEnabled(cmd.Context(), args[0], on)
			if err != nil {
				return err
			}
			if a.json() {
				return a.writeRaw(raw)
			}
			if s.Enabled {
				a.printf("schedule %s enabled; next fire %s\n", s.ID, stamp(s.NextFireAt.Time))
			} else {
				a.printf("schedule %s disabled\n", s.ID)
			}
			return nil
		},
	}
}

func newScheduleCreateCmd(a *app) *cobra.Command {
	var s client.NewSchedule
	var inputs []string
	var inputJSON string
	var disabled bool
	cmd := &cobra.Command{
		Use:   "create WORKFLOW --cron EXPR [--timezone TZ] [--input k=v ...] [--overlap skip|allow] [--disabled]",
		Short: "Create a schedule that starts runs of WORKFLOW",
		Long: `Create a schedule. --cron takes five fields (minute hour day-of-month month
day-of-week), a descriptor such as @daily, or @every <duration>; --timezone an
IANA zone (default UTC). --input and --input-json work as for braid run.`,
		Args: exactArgs(1, "WORKFLOW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if s.Cron == "" {
				return usageErrorf("--cron is required, e.g. --cron '@every 1h' or --cron '0 9 * * 1-5'")
			}
			text, err := a.inputJSON(inputJSON)
			if err != nil {
				return err
			}
			input, err := buildInput(text, inputs)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			s.Workflow, s.Input, s.Enabled = args[0], input, !disabled
			out, raw, err := c.CreateSchedule(cmd.Context(), s)
			if err != nil {
				return err
			}
			if a.json() {
				return a.writeRaw(raw)
			}
			a.printf("schedule %s created; next fire %s\n", out.ID, stamp(out.NextFireAt.Time))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&s.Cron, "cron", "", "cron expression, e.g. '0 9 * * 1-5', @daily or '@every 30s' (required)")
	fl.StringVar(&s.Timezone, "timezone", "", "IANA time zone of the cron fields (default UTC)")
	fl.StringVar(&s.Overlap, "overlap", "", "skip (default) or allow a run while the previous one is active")
	fl.StringArrayVarP(&inputs, "input", "i", nil, "input key=value; repeatable")
	fl.StringVar(&inputJSON, "input-json", "", "input as a JSON object; @FILE reads it from a file, @- from stdin")
	fl.BoolVar(&disabled, "disabled", false, "create it disabled")
	return cmd
}

func newScheduleDeleteCmd(a *app) *cobra.Command {
	return newDeleteCmd(a, "SCHEDULE", "Delete a schedule; the runs it started are kept", "schedule", "schedule_id",
		(*client.Client).DeleteSchedule)
}
