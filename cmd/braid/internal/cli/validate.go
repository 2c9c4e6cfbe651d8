package cli

import (
	"errors"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/spf13/cobra"
)

// validation is the result of validating one file.
type validation struct {
	File     string        `json:"file"`
	Valid    bool          `json:"valid"`
	Name     string        `json:"name,omitempty"`
	Nodes    int           `json:"nodes,omitempty"`
	Problems []dag.Problem `json:"problems"`
}

func newValidateCmd(a *app) *cobra.Command {
	var files []string
	cmd := &cobra.Command{
		Use:   "validate -f FILE|DIR [-f FILE|DIR...]",
		Short: "Check workflow definitions offline and list every problem with its JSON path",
		Long: `validate parses, normalises and checks definitions exactly as the API does,
without contacting it. It prints every problem with its JSON path and exits 1
when any file is invalid.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			if len(files) == 0 {
				return usageErrorf("validate: give a definition with -f FILE")
			}
			var results []validation
			paths, err := definitionFiles(files)
			if err != nil {
				return err
			}
			for _, path := range paths {
				def, err := readFile(path, a.in)
				if err != nil {
					return err
				}
				results = append(results, validateOne(path, def))
			}
			return a.printValidations(results)
		},
	}
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, `workflow definition JSON file, or a directory of them ("-" for standard input); repeatable`)
	return cmd
}

// validateOne validates one definition with pkg/dag.
func validateOne(path string, def []byte) validation {
	d, err := dag.Parse(def)
	var ve *dag.ValidationError
	switch {
	case errors.As(err, &ve):
		return validation{File: path, Problems: ve.Problems}
	case err != nil:
		return validation{File: path, Problems: []dag.Problem{{Path: "$", Message: err.Error()}}}
	}
	return validation{File: path, Valid: true, Name: d.Name, Nodes: len(d.Nodes), Problems: []dag.Problem{}}
}

// printValidations prints the results and fails (exit 1) if any is invalid.
func (a *app) printValidations(results []validation) error {
	invalid := 0
	for _, r := range results {
		if !r.Valid {
			invalid++
		}
	}
	if a.json() {
		if err := a.writeJSON(unwrapOne(toAny(results))); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			a.printValidation(r)
		}
	}
	if invalid > 0 {
		return exitCode(1)
	}
	return nil
}

// printValidation prints one result as text.
func (a *app) printValidation(r validation) {
	if r.Valid {
		noun := "nodes"
		if r.Nodes == 1 {
			noun = "node"
		}
		a.printf("%s: valid (workflow %s, %d %s)\n", r.File, r.Name, r.Nodes, noun)
		return
	}
	a.printf("%s: invalid, %d problem(s):\n", r.File, len(r.Problems))
	for _, p := range r.Problems {
		a.printf("  %s: %s\n", p.Path, p.Message)
	}
}

// toAny converts a slice to []any.
func toAny[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
