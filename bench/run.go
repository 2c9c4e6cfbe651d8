package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/braidhq/braid/bench/internal/stack"
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
	bins, infra, err := startInfra(ctx, c, root, dir, log)
	if err != nil {
		return err
	}
	defer func() {
		if err := infra.Stop(); err != nil {
			log.Warn("stop infra", "err", err)
		}
	}()
	log.Info("infrastructure up", "setup", infra.Setup, "kafka", infra.Brokers, "redis", redactURL(infra.RedisURL))
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
	if c.cluster {
		env.Setup, env.SetupNote = stack.SetupCluster, clusterNote
	}
	enc := json.NewEncoder(out)
	return workload.RunAll(ctx, env, workload.Suite(sizes), c.only, func(l workload.Line) {
		if err := enc.Encode(l); err != nil {
			log.Error("write line", "workload", l.Workload, "err", fmt.Sprint(err))
		}
	})
}

// clusterNote is added to every line's method in the cluster setup.
var clusterNote = fmt.Sprintf("Setup cluster: Redis is a Redis Cluster of %d masters with %d replica each (redis-server, AOF everysec, cluster-node-timeout 5 s; "+
	"the services and the bench use a cluster client), Kafka %d kfake brokers in one kfakebroker process (topics with 3 replicas, min.insync.replicas 2; kfake keeps one copy); "+
	"cpu_pct_redis and redis CPU figures sum all %d redis-server processes, cpu_pct_kfake is the kfakebroker process",
	stack.ClusterMasters, stack.ClusterReplicas, stack.ClusterBrokers, stack.ClusterMasters*(1+stack.ClusterReplicas))

// startInfra builds the binaries (with kfakebroker in the cluster setup)
// and starts the infrastructure of c's setup.
func startInfra(ctx context.Context, c config, root, dir string, log *slog.Logger) (procstack.Binaries, *stack.Infra, error) {
	var extra []string
	if c.cluster {
		extra = append(extra, stack.KfakeBrokerPackage)
	}
	log.Info("building service binaries", "root", root)
	bins, err := procstack.Build(ctx, root, filepath.Join(dir, "bin"), extra...)
	if err != nil {
		return bins, nil, err
	}
	var infra *stack.Infra
	if c.cluster {
		infra, err = stack.StartCluster(ctx, bins, dir)
	} else {
		infra, err = stack.StartSingle(bins, dir)
	}
	return bins, infra, err
}

// redactURL hides a URL's password (braid dev puts one in the Redis URL).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
