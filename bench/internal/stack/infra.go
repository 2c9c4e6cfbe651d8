// Package stack runs Braid as separate OS processes for the benchmarks:
// `braid dev --only infra` (a kfake broker with a data dir and a real
// redis-server with AOF, appendfsync everysec), then an orchestrator, N
// workers and the api from their binaries, configured only through BRAID_*
// environment variables. Processes are stopped by PID.
package stack

import (
	"bufio"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Bounds on starting and stopping processes.
const (
	infraTimeout = 30 * time.Second // braid dev --only infra prints its addresses
	stopTimeout  = 30 * time.Second // SIGTERM → exit, before SIGKILL
	pollEvery    = 20 * time.Millisecond
)

// Infra is the broker and Redis, from `braid dev --only infra`.
type Infra struct {
	// Kafka is the broker's host:port; RedisURL the Redis URL.
	Kafka, RedisURL string
	proc            *Proc
}

// StartInfra runs `braid dev --only infra` with its data under dir/data on
// free loopback ports and waits for the addresses it prints.
func StartInfra(bins Binaries, dir string) (*Infra, error) {
	ka, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	ra, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	p, err := startProc(dir, "infra", bins.Braid, nil, "dev", "--only", "infra",
		"--data-dir", filepath.Join(dir, "data"), "--kafka-addr", ka, "--redis-addr", ra)
	if err != nil {
		return nil, err
	}
	var env map[string]string
	err = Poll(infraTimeout, func() (bool, error) {
		if p.Exited() {
			return false, errExited(p)
		}
		env = exports(p.Log())
		return env["BRAID_KAFKA_BROKERS"] != "" && env["BRAID_REDIS_URL"] != "", nil
	})
	if err != nil {
		_ = p.Stop(stopTimeout)
		return nil, fmt.Errorf("braid dev --only infra: %w\n%s", err, p.Tail())
	}
	return &Infra{Kafka: env["BRAID_KAFKA_BROKERS"], RedisURL: env["BRAID_REDIS_URL"], proc: p}, nil
}

// Proc is the infra process (kfake runs inside it; redis-server is its child).
func (i *Infra) Proc() *Proc { return i.proc }

// Stop stops the infra process (it stops its redis-server first).
func (i *Infra) Stop() error { return i.proc.Stop(stopTimeout) }

// exports parses "export NAME=value" lines.
func exports(out string) map[string]string {
	env := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "export "); ok {
			if k, v, ok := strings.Cut(rest, "="); ok {
				env[k] = v
			}
		}
	}
	return env
}

// FreeAddr returns 127.0.0.1:<a port free right now>.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)), nil
}

// Poll calls cond every pollEvery until it returns true (nil), an error
// (that error) or timeout passes.
func Poll(timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("condition not met within %s", timeout)
		}
		time.Sleep(pollEvery)
	}
}
