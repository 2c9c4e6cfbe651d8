// Package svcmain is the main function the three service binaries share:
// the `healthcheck` argument, a JSON slog logger at the configured level,
// pprof, a context ended by SIGINT or SIGTERM, and the exit code. It
// returns that code rather than calling os.Exit, so that every deferred
// cleanup (pprof, the signal handler, whatever run deferred) has run by the
// time main exits: os.Exit skips deferred calls.
package svcmain

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/opsserve"
	"github.com/braidhq/braid/pkg/pprofserve"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/tracing"
	"github.com/redis/go-redis/v9"
)

// Exit codes of Main.
const (
	ExitOK     = 0
	ExitFailed = 1 // run returned an error
	ExitConfig = 2 // the configuration is wrong: the service did not start
)

// RedisDialTimeout bounds a service's first PING of Redis at start-up.
const RedisDialTimeout = 10 * time.Second

// Settings are what Main needs of a service's configuration before run.
type Settings struct {
	LogLevel   slog.Level // BRAID_LOG_LEVEL
	PprofAddr  string     // BRAID_PPROF_ADDR; "" serves no pprof
	HealthAddr string     // where the service serves /readyz, probed by `healthcheck`
}

// Env is a service's configuration (its internal/config.Config).
type Env interface {
	// MainSettings returns what Main does before run.
	MainSettings() Settings
}

// Main runs a service binary and returns its exit code; main calls
// os.Exit(svcmain.Main(...)) and nothing else. load reads the environment;
// run runs the service until ctx ends (a signal) and returns nil then. An
// error from load, or one run wraps with BadConfig, exits ExitConfig;
// another error from run exits ExitFailed.
func Main[E Env](name string, load func() (E, error), run func(context.Context, E, *slog.Logger) error) int {
	return main(os.Args[1:], os.Stderr, name, load, run)
}

func main[E Env](args []string, stderr io.Writer, name string, load func() (E, error), run func(context.Context, E, *slog.Logger) error) int {
	env, err := load()
	set := env.MainSettings()
	if len(args) > 0 && args[0] == opsserve.HealthcheckArg { // container health checks
		return opsserve.RunHealthcheck(set.HealthAddr, stderr)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: set.LogLevel}))
	if err != nil {
		logger.Error(name+" cannot start", logkey.Err, err)
		return ExitConfig
	}
	prof, err := pprofserve.Start(set.PprofAddr, logger)
	if err != nil {
		logger.Error(name+" cannot start", logkey.Err, err)
		return ExitConfig
	}
	defer prof.Stop()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	flush, err := tracing.Setup(ctx, "braid-"+name, logger)
	if err != nil {
		logger.Error(name+" cannot start", logkey.Err, err)
		return ExitConfig
	}
	defer tracing.Stop(flush, logger)
	logger = slog.New(tracing.LogHandler(logger.Handler()))
	err = run(ctx, env, logger)
	var bad badConfig
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &bad):
		logger.Error(name+" cannot start", logkey.Err, bad.err)
		return ExitConfig
	default:
		logger.Error(name+" failed", logkey.Err, err)
		return ExitFailed
	}
}

// BadConfig marks err as a configuration error found by run (a setting
// only the service itself can parse): Main exits ExitConfig for it.
func BadConfig(err error) error {
	if err == nil {
		return nil
	}
	return badConfig{err}
}

type badConfig struct{ err error }

func (b badConfig) Error() string { return b.err.Error() }
func (b badConfig) Unwrap() error { return b.err }

// WithRedis opens the Redis client at url (roots: a private CA's pool for
// rediss://, or nil), runs run with it, and closes it once run returned:
// a service's clients belong to its caller, which opens them before the
// service starts and closes them after it stopped.
func WithRedis(ctx context.Context, url string, roots *x509.CertPool, run func(rdb redis.UniversalClient) error) error {
	rdb, err := statestore.NewClient(ctx, url, RedisDialTimeout, roots)
	if err != nil {
		return err
	}
	defer rdb.Close()
	return run(rdb)
}
