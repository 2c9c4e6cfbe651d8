// Command braid is Braid's command line: `braid dev` runs the whole stack in
// one process; apply, validate, run, runs, get, logs, cancel and retry talk
// to the API. See `braid --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/braidhq/braid/cmd/braid/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
