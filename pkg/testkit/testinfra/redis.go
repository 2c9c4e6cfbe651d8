package testinfra

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"

	"github.com/braidhq/braid/pkg/devinfra/redisproc"
	"github.com/redis/go-redis/v9"
)

// redisMissing is the t.Fatal message when redis-server is not installed.
const redisMissing = "redis-server not found: run `make deps` (apt-get install redis-server)"

// startAttempts bounds how often StartRedis retries when the free port it
// picked was taken before redis-server could bind it.
const startAttempts = 3

// Redis is a redis-server process started by StartRedis. Its Addr, URL and
// Dir stay the same across Kill and Restart.
type Redis struct {
	// Addr is host:port, e.g. 127.0.0.1:41234.
	Addr string
	// URL is redis://127.0.0.1:port/0, for statestore.NewClient and configs.
	URL string
	// Dir is the working directory holding the append-only file.
	Dir string

	bin  string
	port int
	proc *redisproc.Server
}

// StartRedis spawns redis-server on a free loopback port with AOF on
// (appendfsync everysec, no RDB snapshots) in a fresh t.TempDir, waits until
// it answers PING (at most readyTimeout) and stops it on t.Cleanup: SIGTERM,
// then SIGKILL after stopTimeout.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal(redisMissing)
	}
	r := &Redis{bin: bin, Dir: t.TempDir()}
	t.Cleanup(r.stop)
	for attempt := 1; ; attempt++ {
		r.setPort(FreePort(t))
		err = r.start()
		if err == nil {
			return r
		}
		if attempt == startAttempts {
			t.Fatalf("start redis-server: %v", err)
		}
		t.Logf("start redis-server attempt %d: %v", attempt, err)
	}
}

// Kill sends SIGKILL to the server and waits for it to exit, simulating a
// crash: writes not yet in the append-only file are lost.
func (r *Redis) Kill() {
	if r.proc != nil {
		r.proc.Kill()
		r.proc = nil
	}
}

// Restart stops the server if it still runs (gracefully), starts it again on
// the same port and directory so it replays its append-only file, and waits
// until it answers PING.
func (r *Redis) Restart(t testing.TB) {
	t.Helper()
	r.stop()
	if err := r.start(); err != nil {
		t.Fatalf("restart redis-server on %s: %v", r.Addr, err)
	}
}

// Client returns a go-redis client for r with ContextTimeoutEnabled, so
// context deadlines bound every command. It is closed on t.Cleanup.
func (r *Redis) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: r.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// setPort sets port, Addr and URL together.
func (r *Redis) setPort(port int) {
	r.port = port
	r.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	r.URL = fmt.Sprintf("redis://%s/0", r.Addr)
}

// stop terminates the running server, if any.
func (r *Redis) stop() {
	if r.proc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		_ = r.proc.Stop(ctx) // SIGKILL after stopTimeout
		r.proc = nil
	}
}
