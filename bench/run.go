package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/braidhq/braid/bench/internal/workload"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/procstack"
)

// run builds the binaries, starts the infrastructure, runs the suite and
// writes its lines to out and progress to progress.
func run(ctx context.Context, c config, out, progress io.Writer) error {
	log := newLogger(progress)
	root, err := procstack.RepoRoot(".")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "braid-bench-")
	if err != nil {
		return err
	}
	if c.keep {
		log.Info("process logs kept", "dir", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	log.Info("building service binaries", "root", root)
	bins, err := procstack.Build(ctx, root, filepath.Join(dir, "bin"))
	if err != nil {
		return err
	}
	infra, err := procstack.StartInfra(procstack.InfraConfig{Braid: bins.Braid, Dir: dir})
	if err != nil {
		return err
	}
	defer func() {
		if err := infra.Stop(); err != nil {
			log.Warn("stop infra", "err", err)
		}
	}()
	log.Info("infrastructure up", "kafka", infra.Kafka, "redis", redactURL(infra.RedisURL))
	rdb, err := statestore.NewClient(ctx, infra.RedisURL, 10*time.Second)
	if err != nil {
		return err
	}
	defer rdb.Close()
	sizes := workload.Full
	if c.smoke {
		sizes = workload.Smoke
	}
	if c.sustain > 0 {
		sizes.Sustain = c.sustain
	}
	env := &workload.Env{Bins: bins, Infra: infra, Redis: rdb, Dir: dir, Reps: c.reps, Sizes: sizes, Log: log, ProfilePath: c.profile}
	if c.profile != "" {
		env.Profile = "diamond"
	}
	enc := json.NewEncoder(out)
	return workload.RunAll(ctx, env, workload.Suite(sizes), c.only, func(l workload.Line) {
		if err := enc.Encode(l); err != nil {
			log.Error("write line", "workload", l.Workload, "err", fmt.Sprint(err))
		}
	})
}

// redactURL hides a URL's password (braid dev puts one in the Redis URL).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
