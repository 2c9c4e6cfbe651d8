package procstack

import (
	"bufio"
	"cmp"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Bounds of StartInfra.
const (
	// DefaultInfraTimeout bounds the wait for `braid dev --only infra` to
	// print its addresses.
	DefaultInfraTimeout = 30 * time.Second
	infraPoll           = 20 * time.Millisecond
	infraTailBytes      = 4 << 10 // of the log, in a start error
)

// InfraConfig says how to run `braid dev --only infra`.
type InfraConfig struct {
	// Braid is the path of the braid binary (Binaries.Braid).
	Braid string
	// Dir holds the log (infra.log) and the data (Dir/data).
	Dir string
	// KafkaAddr and RedisAddr are host:port to listen on; default: a free
	// loopback port each.
	KafkaAddr, RedisAddr string
	// Timeout bounds the start; default DefaultInfraTimeout.
	Timeout time.Duration
}

// Infra is a broker (kfake, with a data dir) and a redis-server (AOF,
// appendfsync everysec) run by one `braid dev --only infra` process.
type Infra struct {
	// Kafka is the broker's host:port; RedisURL the Redis URL.
	Kafka, RedisURL string
	proc            *Proc
}

// StartInfra starts `braid dev --only infra` per c and waits until it has
// printed the broker and Redis addresses. On failure the process is
// stopped and the error holds the end of its log.
func StartInfra(c InfraConfig) (*Infra, error) {
	ka, ra, err := infraAddrs(c)
	if err != nil {
		return nil, err
	}
	p, err := Start(Spec{Name: "infra", Bin: c.Braid, Dir: c.Dir, Args: []string{"dev", "--only", "infra",
		"--data-dir", filepath.Join(c.Dir, "data"), "--kafka-addr", ka, "--redis-addr", ra}})
	if err != nil {
		return nil, err
	}
	var env map[string]string
	err = Poll(cmp.Or(c.Timeout, DefaultInfraTimeout), infraPoll, func() (bool, error) {
		if p.Exited() {
			return false, p.ErrExited()
		}
		env = Exports(p.Log())
		return env["BRAID_KAFKA_BROKERS"] != "" && env["BRAID_REDIS_URL"] != "", nil
	})
	if err != nil {
		_ = p.Stop(StopGrace)
		return nil, fmt.Errorf("braid dev --only infra printed no addresses: %w\n%s", err, p.Tail(infraTailBytes))
	}
	return &Infra{Kafka: env["BRAID_KAFKA_BROKERS"], RedisURL: env["BRAID_REDIS_URL"], proc: p}, nil
}

// infraAddrs returns c's addresses, free ports where unset.
func infraAddrs(c InfraConfig) (kafka, redis string, err error) {
	kafka, redis = c.KafkaAddr, c.RedisAddr
	if kafka == "" {
		if kafka, err = FreeAddr(); err != nil {
			return "", "", err
		}
	}
	if redis == "" {
		if redis, err = FreeAddr(); err != nil {
			return "", "", err
		}
	}
	return kafka, redis, nil
}

// Proc is the infra process (kfake runs inside it; redis-server is its
// child).
func (i *Infra) Proc() *Proc { return i.proc }

// Stop stops the infra process within StopGrace (it stops its
// redis-server first).
func (i *Infra) Stop() error { return i.proc.Stop(StopGrace) }

// Exports parses the "export NAME=value" lines of out, as braid dev and
// the e2e broker print them.
func Exports(out string) map[string]string {
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
