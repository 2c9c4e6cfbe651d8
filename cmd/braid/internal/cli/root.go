package cli

import (
	"context"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Main runs the braid command line with args (without the program name) and
// returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return execute(ctx, &app{in: stdin, out: stdout, errOut: stderr, getenv: osEnv, environ: os.Environ}, args)
}

// execute runs the command tree around a with args.
func execute(ctx context.Context, a *app, args []string) int {
	root := newRoot(a)
	root.SetArgs(args)
	root.SetIn(a.in)
	root.SetOut(a.out)
	root.SetErr(a.errOut)
	if err := root.ExecuteContext(ctx); err != nil {
		return report(a.errOut, err)
	}
	return 0
}

// newRoot builds the command tree around a.
func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "braid",
		Short: "Braid: event-driven workflow engine — dev stack and API client",
		Long: `braid runs the whole Braid stack on one machine (braid dev) and talks to a
Braid API: register, list, show and delete workflows, start and watch runs, read
outputs and logs, cancel, retry, pause, resume and rerun runs, approve or reject
approval nodes, manage schedules and list workers; braid admin works on a deployment's Redis
directly (reindex).

Environment: BRAID_URL (default ` + defaultURL + `), BRAID_API_KEY (default: the key
braid dev stored in <data-dir>/api-key), BRAID_DATA_DIR (default .braid).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return a.checkOutput()
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErrorf("%v", err) })
	f := root.PersistentFlags()
	f.StringVar(&a.url, "url", "", "API base URL (env BRAID_URL; default "+defaultURL+")")
	f.StringVar(&a.apiKey, "api-key", "", "API key (env BRAID_API_KEY; default: <data-dir>/api-key)")
	f.StringVarP(&a.output, "output", "o", outputTable, "output format: table or json")
	f.StringVar(&a.dataDir, "data-dir", "", "braid dev's data directory (env BRAID_DATA_DIR; default .braid)")
	root.AddCommand(
		newDevCmd(a), newApplyCmd(a), newValidateCmd(a), newRunCmd(a), newRunsCmd(a),
		newGetCmd(a), newOutputCmd(a), newLogsCmd(a), newRunDeleteCmd(a),
		newWorkflowsCmd(a), newWorkflowCmd(a), newSchedulesCmd(a), newScheduleCmd(a), newWorkersCmd(a), newVersionCmd(a), newAdminCmd(a),
	)
	root.AddCommand(newControlCmds(a)...)
	return root
}
