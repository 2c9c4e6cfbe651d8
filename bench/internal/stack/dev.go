package stack

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/testkit/procstack"
)

// SetupDev names lines measured on one `braid dev` process.
const SetupDev = "dev"

// Facts of `braid dev` the bench relies on (cmd/braid/internal/devstack,
// which the bench cannot import): the files it keeps in its data dir, its
// default worker count and their ids, and the line its banner starts with.
const (
	devKeyFile     = "api-key"        // devstack.KeyFile
	devRedisPwFile = "redis-password" // devstack.RedisPasswordFile
	DevWorkers     = 2                // devstack.DefaultWorkers
	// DevConcurrency is the slots per worker the bench gives braid dev
	// (--worker-concurrency, passed although it is also the default,
	// devstack.DefaultWorkerConcurrency, so that a changed default cannot
	// change what a line measured): 64, as the separate-process stack's
	// workers and as issue 20's side-by-side table ran it.
	DevConcurrency  = 64
	devWorkerPrefix = "dev-worker-" // worker ids: dev-worker-1, dev-worker-2
	devBanner       = "Braid dev stack is up."
	devReadyTimeout = 90 * time.Second // banner, key and every worker listed
	// DevStopGrace bounds a braid dev shutdown between SIGTERM and SIGKILL.
	DevStopGrace = 30 * time.Second
)

// Dev is one `braid dev` process — kfake, redis-server (its child), the
// api, the orchestrator and DevWorkers workers of DevConcurrency slots, as
// a user runs it — with a fresh data dir on free loopback ports, at its
// default log level.
type Dev struct {
	// URL is the api's base URL; Key the key braid dev generated.
	URL, Key string
	// Kafka is the embedded broker's host:port; RedisURL its Redis, with
	// the generated password.
	Kafka, RedisURL string
	// Proc is the braid dev process.
	Proc *procstack.Proc
	// WorkerIDs are the in-process workers' ids.
	WorkerIDs []string
	dataDir   string
}

// StartDev starts `braid dev` (bins.Braid) with its data under dir/data and
// its log in dir, and waits until its banner is printed, its api key is
// stored and ready(d) holds. When pprofAddr is set it is the process's
// BRAID_PPROF_ADDR. On failure the process is stopped and the error holds
// the end of its log.
func StartDev(bins procstack.Binaries, dir, pprofAddr string, ready func(d *Dev) bool) (*Dev, error) {
	var addrs [3]string
	for i := range addrs {
		a, err := procstack.FreeAddr()
		if err != nil {
			return nil, err
		}
		addrs[i] = a
	}
	d := &Dev{URL: "http://" + addrs[0], Kafka: addrs[1], dataDir: filepath.Join(dir, "data")}
	for i := range DevWorkers {
		d.WorkerIDs = append(d.WorkerIDs, fmt.Sprintf("%s%d", devWorkerPrefix, i+1))
	}
	var env []string
	if pprofAddr != "" {
		env = append(env, "BRAID_PPROF_ADDR="+pprofAddr)
	}
	p, err := procstack.Start(procstack.Spec{Name: "braid-dev", Bin: bins.Braid, Dir: dir, Env: env,
		Args: []string{"dev", "--addr", addrs[0], "--kafka-addr", addrs[1], "--redis-addr", addrs[2], "--data-dir", d.dataDir,
			"--worker-concurrency", strconv.Itoa(DevConcurrency)}})
	if err != nil {
		return nil, err
	}
	d.Proc = p
	err = procstack.Poll(devReadyTimeout, pollEvery, func() (bool, error) {
		if p.Exited() {
			return false, p.ErrExited()
		}
		if !strings.Contains(p.Log(), devBanner) {
			return false, nil
		}
		if err := d.readSecrets(addrs[2]); err != nil {
			return false, nil // written before the banner; read again
		}
		return ready(d), nil
	})
	if err != nil {
		_ = p.Stop(DevStopGrace)
		return nil, fmt.Errorf("braid dev not ready: %w\n%s", err, p.Tail(logTailBytes))
	}
	return d, nil
}

// readSecrets reads the api key and the Redis password from the data dir.
func (d *Dev) readSecrets(redisAddr string) error {
	key, err1 := os.ReadFile(filepath.Join(d.dataDir, devKeyFile))
	pw, err2 := os.ReadFile(filepath.Join(d.dataDir, devRedisPwFile))
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	d.Key = strings.TrimSpace(string(key))
	u := url.URL{Scheme: "redis", Host: redisAddr, Path: "/0", User: url.UserPassword("", strings.TrimSpace(string(pw)))}
	d.RedisURL = u.String()
	return nil
}

// RedisPIDs is the redis-server braid dev runs (its only child).
func (d *Dev) RedisPIDs() []int {
	kids, _ := d.Proc.Children()
	return kids
}

// Alive reports an error when the braid dev process has exited.
func (d *Dev) Alive() error {
	if d.Proc.Exited() {
		return fmt.Errorf("%w\n%s", d.Proc.ErrExited(), d.Proc.Tail(logTailBytes))
	}
	return nil
}

// Stop stops braid dev by PID — SIGTERM, SIGKILL after DevStopGrace — and
// removes its data dir (its log stays). Safe to call twice.
func (d *Dev) Stop() error {
	err := d.Proc.Stop(DevStopGrace)
	return errors.Join(err, os.RemoveAll(d.dataDir))
}
