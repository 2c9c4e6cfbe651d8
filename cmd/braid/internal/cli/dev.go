package cli

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/braidhq/braid/cmd/braid/internal/autoprocs"
	"github.com/braidhq/braid/cmd/braid/internal/devstack"
	"github.com/braidhq/braid/pkg/handler"
	"github.com/braidhq/braid/pkg/pprofserve"
	"github.com/braidhq/braid/pkg/tracing"
	"github.com/braidhq/braid/pkg/worker"
	"github.com/braidhq/braid/services/orchestrator/orchsvc"
	"github.com/spf13/cobra"
)

// devFlags are the flags of braid dev.
type devFlags struct {
	cfg           devstack.Config
	only          string
	logLevel      string
	allowLoopback bool
	procs         int
}

func newDevCmd(a *app) *cobra.Command {
	var f devFlags
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the whole stack in one process: broker, Redis, api, orchestrator, workers",
		Long: `dev starts an embedded Kafka-protocol broker (kfake, data in <data-dir>/kafka),
redis-server with AOF (data in <data-dir>/redis; an in-memory fallback with a
warning when redis-server is not installed), the api, the orchestrator and
--workers workers, then prints the API URL and key. Ctrl-C stops everything in
order; the next start resumes unfinished runs.

Keys: BRAID_API_KEYS (name:key:role,...) when set; otherwise a key is generated
once and kept in <data-dir>/api-key.

Egress: unlike braid-worker, http and llm nodes may call loopback (services on
this machine), but never the stack's own api, broker and Redis ports;
--allow-loopback=false refuses loopback too. BRAID_HTTP_ALLOW opens private
names and ranges as for braid-worker.

Retention: ended runs are deleted a week after they ended (BRAID_RUN_RETENTION,
e.g. 30d or 36h; 0 keeps every run).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDev(cmd, a, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.cfg.APIAddr, "addr", devstack.DefaultAPIAddr, "address the api listens on")
	fl.StringVar(&f.cfg.KafkaAddr, "kafka-addr", devstack.DefaultKafkaAddr, "address the embedded broker listens on")
	fl.StringVar(&f.cfg.RedisAddr, "redis-addr", devstack.DefaultRedisAddr, "address Redis listens on")
	fl.IntVar(&f.cfg.Workers, "workers", devstack.DefaultWorkers, "workers to run in-process")
	fl.IntVar(&f.cfg.WorkerConcurrency, "worker-concurrency", devstack.DefaultWorkerConcurrency, "tasks each worker runs at once")
	fl.StringVar(&f.only, "only", "", `start only part of the stack: "infra" (broker and Redis)`)
	fl.BoolVar(&f.cfg.EmbeddedRedis, "embedded-redis", false, "use the in-memory Redis even when redis-server is installed (state is lost on exit)")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.BoolVar(&f.allowLoopback, "allow-loopback", true, "let http and llm nodes call loopback (except the stack's own ports)")
	fl.IntVar(&f.procs, "procs", 0, "CPUs the stack's Go code runs on at once (GOMAXPROCS), fixed; default: GOMAXPROCS from the environment, else half the CPUs (at least 1) and up to all of them while goroutines queue for a CPU")
	return cmd
}

// runDev turns the flags into a devstack.Config and runs it.
func runDev(cmd *cobra.Command, a *app, f devFlags) error {
	switch f.only {
	case "":
	case "infra":
		f.cfg.OnlyInfra = true
	default:
		return usageErrorf("--only %q: the only part is infra", f.only)
	}
	if f.cfg.Workers < 1 {
		return usageErrorf("--workers %d: want 1 or more", f.cfg.Workers)
	}
	if f.procs < 0 {
		return usageErrorf("--procs %d: want 1 or more (0: the default)", f.procs)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return usageErrorf("--log-level %q: want debug, info, warn or error", f.logLevel)
	}
	f.cfg.DataDir = a.dataDirectory()
	f.cfg.APIKeys = a.getenv("BRAID_API_KEYS")
	f.cfg.TaskEnv = taskEnv(a)
	retention, err := orchsvc.ParseRunRetention(a.getenv("BRAID_RUN_RETENTION"))
	if err != nil {
		return usageErrorf("BRAID_RUN_RETENTION=%w", err)
	}
	f.cfg.RunRetention = retention
	allow, err := handler.ParseAllowList(a.getenv("BRAID_HTTP_ALLOW"))
	if err != nil {
		return usageErrorf("BRAID_HTTP_ALLOW: %w", err)
	}
	f.cfg.HTTPAllow, f.cfg.RefuseLoopback = allow, !f.allowLoopback
	f.cfg.Out = a.out
	logger := slog.New(slog.NewTextHandler(a.errOut, &slog.HandlerOptions{Level: level}))
	flush, err := tracing.Setup(cmd.Context(), "braid-dev", logger)
	if err != nil {
		return usageErrorf("%w", err)
	}
	defer tracing.Stop(flush, logger)
	f.cfg.Logger = slog.New(tracing.LogHandler(logger.Handler()))
	cpus := runtime.GOMAXPROCS(0)
	floor, ceiling := devProcs(f.procs, a.getenv("GOMAXPROCS"), cpus)
	if floor > 0 {
		runtime.GOMAXPROCS(floor)
	}
	if pct, ok := devGCPercentFor(a.getenv("GOGC")); ok {
		debug.SetGCPercent(pct)
	}
	gcPercent := debug.SetGCPercent(-1)
	debug.SetGCPercent(gcPercent)
	f.cfg.Logger.Info("braid dev: Go runtime", "gomaxprocs", runtime.GOMAXPROCS(0), "gomaxprocs_max", max(ceiling, runtime.GOMAXPROCS(0)), "cpus", cpus, "gc_percent", gcPercent)
	ctx, stopProcs := context.WithCancel(cmd.Context())
	procsDone := make(chan struct{})
	go func() {
		defer close(procsDone)
		autoprocs.Run(ctx, autoprocs.Config{Min: floor, Max: ceiling, Logger: f.cfg.Logger})
	}()
	defer func() { stopProcs(); <-procsDone }()
	// BRAID_PPROF_ADDR serves the Go profiles of the whole stack, as each
	// service binary does (loopback only: it has no authentication).
	prof, err := pprofserve.Start(a.getenv("BRAID_PPROF_ADDR"), logger)
	if err != nil {
		return usageErrorf("BRAID_PPROF_ADDR: %w", err)
	}
	defer prof.Stop()
	return devstack.Run(cmd.Context(), f.cfg)
}

// devProcs returns the floor and the ceiling of the GOMAXPROCS braid dev
// runs on, 0 and 0 to leave the runtime's: --procs when given, fixed; none
// when GOMAXPROCS is in the environment (the runtime applied it); else
// half of cpus (the runtime's default, which follows CPU affinity and
// cgroup limits), at least 1, up to all of cpus while goroutines queue
// for a P (package autoprocs). braid dev shares the machine with its
// redis-server, which runs commands on one thread, and with the clients
// driving it; on two cores one P took a sequential 1-node run from about
// 2.1 to 1.3 ms of the process's CPU and its latency with it (DESIGN,
// Round two): every wake-up of a goroutine on another P is a futex and an
// inter-processor interrupt, and the stack's hops hand work from
// goroutine to goroutine all the time. Under a load that keeps goroutines
// waiting for that one P, the second core serves more than it costs.
func devProcs(flag int, env string, cpus int) (floor, ceiling int) {
	switch {
	case flag > 0:
		return flag, flag
	case env != "":
		return 0, 0
	default:
		return max(1, cpus/2), max(1, cpus)
	}
}

// devGCPercent is the garbage collector's target braid dev sets when GOGC
// is not in the environment (the runtime applied that one): the heap may
// grow to five times what is live before a collection, instead of twice.
// The whole stack is one process whose live heap is small, while a large
// run allocates fast: a 10,000-node run builds its records, dispatches and
// answer within half a second. At the default, collections took 11 % of
// braid dev's CPU on that fan-out; at 400 it ran 15–25 % faster for a peak
// RSS of 260–330 MB instead of 135–140 MB (DESIGN, Round two, 21), with no
// change on small runs.
const devGCPercent = 400

// devGCPercentFor returns the GC percent braid dev sets, and false when
// GOGC is in the environment env (the runtime applied it).
func devGCPercentFor(env string) (int, bool) {
	if env != "" {
		return 0, false
	}
	return devGCPercent, true
}

// secretPrefix starts the variables holding secrets for tasks, as for the
// worker service: BRAID_SECRET_TOKEN is << secret.TOKEN >>.
const secretPrefix = "BRAID_SECRET_"

// taskEnv reads the workers' task settings as the worker service does:
// BRAID_WORKER_PASS_ENV, BRAID_WORKER_HANDLERS, BRAID_SECRET_<NAME> and
// BRAID_WORKER_SECRETS_DIR.
func taskEnv(a *app) devstack.TaskEnv {
	te := devstack.TaskEnv{PassEnv: splitList(a.getenv("BRAID_WORKER_PASS_ENV")), Handlers: splitList(a.getenv("BRAID_WORKER_HANDLERS"))}
	var chain worker.SecretChain
	if a.environ != nil {
		m := worker.SecretMap{}
		for _, kv := range a.environ() {
			k, v, _ := strings.Cut(kv, "=")
			if name, ok := strings.CutPrefix(k, secretPrefix); ok && name != "" && v != "" {
				m[name] = v
			}
		}
		if len(m) > 0 {
			chain = append(chain, m)
		}
	}
	if dir := a.getenv("BRAID_WORKER_SECRETS_DIR"); dir != "" {
		chain = append(chain, worker.SecretDir(dir))
	}
	if len(chain) > 0 {
		te.Secrets = chain
	}
	return te
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
