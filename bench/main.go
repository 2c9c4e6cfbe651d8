// Command bench is Braid's load generator (`make bench`): it builds the
// service binaries, starts the broker and Redis with `braid dev --only
// infra` (kfake with a data dir, redis-server with AOF, appendfsync
// everysec), runs each workload against fresh api, orchestrator and worker
// processes through the HTTP API, and prints one JSON line per workload on
// stdout; progress goes to stderr.
//
// Settings (flag, else environment): -reps / BENCH_REPS repetitions per
// figure (default 3, at least 3), -sustain / BENCH_SUSTAIN the diamond load's
// duration (default 20s), -only / BENCH_ONLY comma-separated workload names,
// -profile / BENCH_PROFILE a file for the orchestrator's CPU profile during
// the diamond load (and `braid dev`'s during dev_diamond, in the same name
// with -dev before its extension), -cluster / BENCH_CLUSTER=1 the cluster setup (below),
// -smoke tiny sizes, -keep keep the logs directory.
//
// The cluster setup runs the same workloads on a Redis Cluster of three
// masters with a replica each (six redis-server processes, AOF, appendfsync
// everysec) and a kfakebroker process of three brokers instead of `braid
// dev --only infra`; every line then carries "setup":"cluster".
//
// The dev setup (the dev_* workloads, in the default suite; with
// BENCH_CLUSTER only when named) runs workloads on one fresh `braid dev`
// process each — the product as a user runs it, default flags, its own
// data dir and free loopback ports — and tags their lines "setup":"dev".
// Services run at their default log level (info).
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	cfg, err := parseConfig(os.Args[1:], os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// config is the command line and environment.
type config struct {
	reps    int
	sustain time.Duration
	only    string
	profile string
	smoke   bool
	keep    bool
	cluster bool
}

// parseConfig reads flags, falling back to BENCH_* variables via getenv.
func parseConfig(args []string, getenv func(string) string) (config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c config
	reps := fs.String("reps", getenv("BENCH_REPS"), "repetitions per figure (≥ 3)")
	sustain := fs.String("sustain", getenv("BENCH_SUSTAIN"), "duration of the diamond load, e.g. 60s")
	fs.StringVar(&c.only, "only", getenv("BENCH_ONLY"), "comma-separated workloads (floor always runs)")
	fs.StringVar(&c.profile, "profile", getenv("BENCH_PROFILE"), "write the orchestrator's CPU profile during the diamond load here (braid dev's during dev_diamond: -dev before the extension)")
	fs.BoolVar(&c.cluster, "cluster", isTrue(getenv("BENCH_CLUSTER")), "run on a 3+3 Redis Cluster and 3 kfake brokers")
	fs.BoolVar(&c.smoke, "smoke", false, "tiny sizes (seconds), for the test")
	fs.BoolVar(&c.keep, "keep", false, "keep the directory of process logs")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.reps, err = strconv.Atoi(cmp.Or(*reps, "3")); err != nil || c.reps < 3 {
		return c, fmt.Errorf("reps %q: want an integer ≥ 3", *reps)
	}
	if *sustain != "" {
		if c.sustain, err = time.ParseDuration(*sustain); err != nil || c.sustain < time.Second {
			return c, fmt.Errorf("sustain %q: want a duration ≥ 1s such as 60s", *sustain)
		}
	}
	return c, nil
}

// isTrue reads a boolean setting: 1, true, yes or on.
func isTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// newLogger writes progress as text to w.
func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
