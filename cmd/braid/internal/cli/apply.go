package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/braidhq/braid/cmd/braid/internal/client"
	"github.com/braidhq/braid/pkg/dag"
	"github.com/spf13/cobra"
)

// unchangedRef is what apply -o json prints for a definition the latest
// version already holds.
type unchangedRef struct {
	Name      string `json:"name"`
	Version   int    `json:"version"`
	Unchanged bool   `json:"unchanged"`
}

func newApplyCmd(a *app) *cobra.Command {
	var files []string
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR [-f FILE|DIR...]",
		Short: "Register workflow definitions (a new version when the name exists and the definition changed)",
		Long: `apply registers each definition as the next version of its workflow. A
definition the latest version already holds (the same once parsed: layout
and key order do not count, a value spelled out does) registers nothing and
is reported unchanged, so applying the same files again is harmless. A
directory stands for the .json files directly in it, in name order.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return usageErrorf("apply: give a definition with -f FILE")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			var refs []any
			paths, err := definitionFiles(files)
			if err != nil {
				return err
			}
			for _, path := range paths {
				def, err := readFile(path, a.in)
				if err != nil {
					return err
				}
				if name, v := latestIfSame(cmd.Context(), c, def); v > 0 {
					refs = append(refs, unchangedRef{Name: name, Version: v, Unchanged: true})
					if !a.json() {
						a.printf("workflow %s unchanged (version %d, from %s)\n", name, v, path)
					}
					continue
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
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, `workflow definition JSON file, or a directory of them ("-" for standard input); repeatable`)
	return cmd
}

// unwrapOne returns the only element of a one-element list, else the list.
func unwrapOne(items []any) any {
	if len(items) == 1 {
		return items[0]
	}
	return items
}

// latestIfSame returns def's workflow and its latest version when that
// holds the same definition, version 0 otherwise or when that cannot be
// told (def does not parse — the api will say why —, or the workflow is
// not registered or not readable): both are parsed and encoded alike, so
// only a change the api would store counts.
func latestIfSame(ctx context.Context, c *client.Client, def []byte) (string, int) {
	d, local, err := canonical(def)
	if err != nil {
		return "", 0
	}
	doc, _, err := c.GetWorkflow(ctx, d.Name, 0)
	if err != nil || doc.Version <= 0 {
		return "", 0
	}
	if _, stored, err := canonical(doc.Definition); err != nil || !bytes.Equal(local, stored) {
		return "", 0
	}
	return d.Name, doc.Version
}

// canonical parses a definition and encodes what was parsed, alike for the
// file and the stored version (the api stores its own encoding of the
// parsed definition, so the stored text alone would not compare).
func canonical(def []byte) (*dag.Definition, []byte, error) {
	d, err := dag.Parse(def)
	if err != nil {
		return nil, nil, err
	}
	enc, err := json.Marshal(d)
	return d, enc, err
}
