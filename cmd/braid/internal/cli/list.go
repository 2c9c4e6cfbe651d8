package cli

import (
	"context"
	"encoding/json"

	"github.com/braidhq/braid/cmd/braid/internal/client"
	"github.com/spf13/cobra"
)

// newPageCmd builds a command that lists one page of a collection (--limit,
// --cursor) with list, a client method such as (*client.Client).ListRuns:
// the api's answer with -o json, else print's table. noun names the items
// in the flags' help.
func newPageCmd[P any](a *app, use, short, noun string, limit int,
	list func(*client.Client, context.Context, int, string) (P, json.RawMessage, error), print func(P) error) *cobra.Command {
	var cursor string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			page, raw, err := list(c, cmd.Context(), limit, cursor)
			if err != nil {
				return err
			}
			if a.json() {
				return a.writeRaw(raw)
			}
			return print(page)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", limit, "most "+noun+" to list (at least 1; the api allows up to 500)")
	cmd.Flags().StringVar(&cursor, "cursor", "", "continue after the previous page (printed at its end)")
	return cmd
}

// checkLimit refuses a --limit below 1 (the api takes 1 to 500 and says so
// past the top).
func checkLimit(n int) error {
	if n < 1 {
		return usageErrorf("--limit %d: list at least 1 (the api allows up to 500 a page; --cursor continues)", n)
	}
	return nil
}

// endList writes table t of a page of n items out, then says so when the
// page is empty (none) and how to ask for the next page when there is one.
func (a *app) endList(t *table, n int, none, next string) error {
	if err := t.flush(); err != nil {
		return err
	}
	if n == 0 {
		a.printf("%s\n", none)
	}
	if next != "" {
		a.printf("more: --cursor %s\n", next)
	}
	return nil
}

// newDeleteCmd builds "delete ARG": it calls del with the argument and says
// "<noun> ARG deleted" (with -o json {"<field>": ARG, "deleted": "true"}).
func newDeleteCmd(a *app, arg, short, noun, field string, del func(*client.Client, context.Context, string) error) *cobra.Command {
	return &cobra.Command{
		Use:   "delete " + arg,
		Short: short,
		Args:  exactArgs(1, arg),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := del(c, cmd.Context(), args[0]); err != nil {
				return err
			}
			if a.json() {
				return a.writeJSON(map[string]string{field: args[0], "deleted": "true"})
			}
			a.printf("%s %s deleted\n", noun, args[0])
			return nil
		},
	}
}
